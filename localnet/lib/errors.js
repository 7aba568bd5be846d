// Conversion of LiteSVM transaction errors into agave's JSON shapes and
// human-readable messages.

export const TX_ERRORS = [
  ['AccountInUse', 'Account in use'],
  ['AccountLoadedTwice', 'Account loaded twice'],
  ['AccountNotFound', 'Attempt to debit an account but found no record of a prior credit.'],
  ['ProgramAccountNotFound', 'Attempt to load a program that does not exist'],
  ['InsufficientFundsForFee', 'Insufficient funds for fee'],
  ['InvalidAccountForFee', 'This account may not be used to pay transaction fees'],
  ['AlreadyProcessed', 'This transaction has already been processed'],
  ['BlockhashNotFound', 'Blockhash not found'],
  ['CallChainTooDeep', 'Loader call chain is too deep'],
  ['MissingSignatureForFee', 'Transaction requires a fee but has no signature present'],
  ['InvalidAccountIndex', 'Transaction contains an invalid account reference'],
  ['SignatureFailure', 'Transaction did not pass signature verification'],
  ['InvalidProgramForExecution', 'This program may not be used for executing instructions'],
  ['SanitizeFailure', 'Transaction failed to sanitize accounts offsets correctly'],
  ['ClusterMaintenance', 'Transactions are currently disabled due to cluster maintenance'],
  ['AccountBorrowOutstanding', 'Transaction processing left an account with an outstanding borrowed reference'],
  ['WouldExceedMaxBlockCostLimit', 'Transaction would exceed max Block Cost Limit'],
  ['UnsupportedVersion', 'Transaction version is unsupported'],
  ['InvalidWritableAccount', 'Transaction loads a writable account that cannot be written'],
  ['WouldExceedMaxAccountCostLimit', 'Transaction would exceed max account limit within the block'],
  ['WouldExceedAccountDataBlockLimit', 'Transaction would exceed account data limit within the block'],
  ['TooManyAccountLocks', 'Transaction locked too many accounts'],
  ['AddressLookupTableNotFound', "Transaction loads an address table account that doesn't exist"],
  ['InvalidAddressLookupTableOwner', 'Transaction loads an address table account with an invalid owner'],
  ['InvalidAddressLookupTableData', 'Transaction loads an address table account with invalid data'],
  ['InvalidAddressLookupTableIndex', 'Transaction address table lookup uses an invalid index'],
  ['InvalidRentPayingAccount', 'Transaction leaves an account with a lower balance than rent-exempt minimum'],
  ['WouldExceedMaxVoteCostLimit', 'Transaction would exceed max Vote Cost Limit'],
  ['WouldExceedAccountDataTotalLimit', 'Transaction would exceed total account data limit'],
  ['MaxLoadedAccountsDataSizeExceeded', 'Transaction exceeded max loaded accounts data size cap'],
  ['InvalidLoadedAccountsDataSizeLimit', 'LoadedAccountsDataSizeLimit set for transaction must be greater than 0.'],
  ['ResanitizationNeeded', 'ResanitizationNeeded'],
  ['UnbalancedTransaction', 'Sum of account balances before and after transaction do not match'],
  ['ProgramCacheHitMaxLimit', 'Program cache hit max limit'],
  ['CommitCancelled', 'CommitCancelled'],
];
const TX_ERROR_MSG = Object.fromEntries(TX_ERRORS);

export const IX_ERRORS = [
  ['GenericError', 'generic instruction error'],
  ['InvalidArgument', 'invalid program argument'],
  ['InvalidInstructionData', 'invalid instruction data'],
  ['InvalidAccountData', 'invalid account data for instruction'],
  ['AccountDataTooSmall', 'account data too small for instruction'],
  ['InsufficientFunds', 'insufficient funds for instruction'],
  ['IncorrectProgramId', 'incorrect program id for instruction'],
  ['MissingRequiredSignature', 'missing required signature for instruction'],
  ['AccountAlreadyInitialized', 'instruction requires an uninitialized account'],
  ['UninitializedAccount', 'instruction requires an initialized account'],
  ['UnbalancedInstruction', 'sum of account balances before and after instruction do not match'],
  ['ModifiedProgramId', 'instruction illegally modified the program id of an account'],
  ['ExternalAccountLamportSpend', 'instruction spent from the balance of an account it does not own'],
  ['ExternalAccountDataModified', 'instruction modified data of an account it does not own'],
  ['ReadonlyLamportChange', 'instruction changed the balance of a read-only account'],
  ['ReadonlyDataModified', 'instruction modified data of a read-only account'],
  ['DuplicateAccountIndex', 'instruction contains duplicate accounts'],
  ['ExecutableModified', 'instruction changed executable bit of an account'],
  ['RentEpochModified', 'instruction modified rent epoch of an account'],
  ['NotEnoughAccountKeys', 'insufficient account keys for instruction'],
  ['AccountDataSizeChanged', "program other than the account's owner changed the size of the account data"],
  ['AccountNotExecutable', 'instruction expected an executable account'],
  ['AccountBorrowFailed', 'instruction tries to borrow reference for an account which is already borrowed'],
  ['AccountBorrowOutstanding', 'instruction left account with an outstanding borrowed reference'],
  ['DuplicateAccountOutOfSync', 'instruction modifications of multiply-passed account differ'],
  ['InvalidError', 'program returned invalid error code'],
  ['ExecutableDataModified', 'instruction changed executable accounts data'],
  ['ExecutableLamportChange', 'instruction changed the balance of an executable account'],
  ['ExecutableAccountNotRentExempt', 'executable accounts must be rent exempt'],
  ['UnsupportedProgramId', 'Unsupported program id'],
  ['CallDepth', 'Cross-program invocation call depth too deep'],
  ['MissingAccount', 'An account required by the instruction is missing'],
  ['ReentrancyNotAllowed', 'Cross-program invocation reentrancy not allowed for this instruction'],
  ['MaxSeedLengthExceeded', 'Length of the seed is too long for address generation'],
  ['InvalidSeeds', 'Provided seeds do not result in a valid address'],
  ['InvalidRealloc', 'Failed to reallocate account data'],
  ['ComputationalBudgetExceeded', 'Computational budget exceeded'],
  ['PrivilegeEscalation', 'Cross-program invocation with unauthorized signer or writable account'],
  ['ProgramEnvironmentSetupFailure', 'Failed to create program execution environment'],
  ['ProgramFailedToComplete', 'Program failed to complete'],
  ['ProgramFailedToCompile', 'Program failed to compile'],
  ['Immutable', 'Account is immutable'],
  ['IncorrectAuthority', 'Incorrect authority provided'],
  ['AccountNotRentExempt', 'An account does not have enough lamports to be rent-exempt'],
  ['InvalidAccountOwner', 'Invalid account owner'],
  ['ArithmeticOverflow', 'Program arithmetic overflowed'],
  ['UnsupportedSysvar', 'Unsupported sysvar'],
  ['IllegalOwner', 'Provided owner is not allowed'],
  ['MaxAccountsDataAllocationsExceeded', 'Accounts data allocations exceeded the maximum allowed per transaction'],
  ['MaxAccountsExceeded', 'Max accounts exceeded'],
  ['MaxInstructionTraceLengthExceeded', 'Max instruction trace length exceeded'],
  ['BuiltinProgramsMustConsumeComputeUnits', 'Builtin programs must consume compute units'],
  ['BorshIoError', 'Failed to serialize or deserialize account data'],
];
const IX_ERROR_MSG = Object.fromEntries(IX_ERRORS);

// Numeric values of LiteSVM's fieldless enums (see litesvm dist/internal.d.ts).
const LITESVM_TX_FIELDLESS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound',
  'InsufficientFundsForFee', 'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound',
  'CallChainTooDeep', 'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure',
  'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance', 'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded', 'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit', 'CommitCancelled',
];
const LITESVM_IX_FIELDLESS = IX_ERRORS.map(([n]) => n); // same order, BorshIoError = 52

function convertIxError(e) {
  if (typeof e === 'number') return LITESVM_IX_FIELDLESS[e] ?? 'GenericError';
  if (e && typeof e.code === 'number') return { Custom: e.code };
  if (e && typeof e.msg === 'string') return 'BorshIoError';
  return 'GenericError';
}

/** Converts a LiteSVM TransactionError into agave's serde JSON form. */
export function convertTxError(e) {
  if (typeof e === 'number') return LITESVM_TX_FIELDLESS[e] ?? 'SanitizeFailure';
  const name = e?.constructor?.name ?? '';
  if (name.includes('InstructionError') || (typeof e.err === 'function' && typeof e.index === 'number')) {
    return { InstructionError: [e.index, convertIxError(e.err())] };
  }
  if (name.includes('DuplicateInstruction')) return { DuplicateInstruction: e.index };
  if (name.includes('InsufficientFundsForRent')) return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  if (name.includes('ProgramExecutionTemporarilyRestricted')) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
  }
  return 'SanitizeFailure';
}

function ixErrorMessage(e) {
  if (typeof e === 'string') return IX_ERROR_MSG[e] ?? e;
  if (e && 'Custom' in e) return `custom program error: 0x${e.Custom.toString(16)}`;
  if (e && 'BorshIoError' in e) return IX_ERROR_MSG.BorshIoError;
  return String(e);
}

/** agave's Display text for a TransactionError in JSON form. */
export function txErrorMessage(err) {
  if (typeof err === 'string') return TX_ERROR_MSG[err] ?? err;
  if (err.InstructionError) {
    const [idx, e] = err.InstructionError;
    return `Error processing Instruction ${idx}: ${ixErrorMessage(e)}`;
  }
  if ('DuplicateInstruction' in err) {
    return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
  }
  if (err.InsufficientFundsForRent) {
    return `Transaction results in an account (${err.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  }
  if (err.ProgramExecutionTemporarilyRestricted) {
    return `Execution of the program referenced by account at index ${err.ProgramExecutionTemporarilyRestricted.account_index} is temporarily restricted.`;
  }
  return JSON.stringify(err);
}

/** A JSON-RPC error carrying code/message/data. */
export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
  toJSON() {
    const o = { code: this.code, message: this.message };
    if (this.data !== undefined) o.data = this.data;
    return o;
  }
}

export const invalidParams = (msg) => new RpcError(-32602, msg);
export const invalidRequest = (msg = 'Invalid request') => new RpcError(-32600, msg);
