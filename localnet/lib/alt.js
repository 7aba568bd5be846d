// jsonParsed form of Address Lookup Table accounts, as agave's
// parse_address_lookup_table gives it. @solana/kit's
// fetchAddressesForLookupTables reads tables this way (x402 facilitators
// use it to resolve a v0 payment's lookups).
import { b58encode } from './base58.js';

export const ALT_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
const META_SIZE = 56;

/** {program, parsed, space} for a lookup table's data, or null when it does not parse (agave then answers base64). */
export function parseLookupTableJson(data) {
  if (data.length < 4) return null;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const discriminator = dv.getUint32(0, true);
  const wrap = (parsed) => ({ program: 'address-lookup-table', parsed, space: data.length });
  if (discriminator === 0) return wrap({ type: 'uninitialized' });
  if (discriminator !== 1 || data.length < META_SIZE || (data.length - META_SIZE) % 32 !== 0) return null;
  const info = {
    deactivationSlot: dv.getBigUint64(4, true).toString(),
    lastExtendedSlot: dv.getBigUint64(12, true).toString(),
    lastExtendedSlotStartIndex: data[20],
  };
  if (data[21] === 1) info.authority = b58encode(data.subarray(22, 54));
  else if (data[21] !== 0) return null;
  info.addresses = [];
  for (let o = META_SIZE; o < data.length; o += 32) info.addresses.push(b58encode(data.subarray(o, o + 32)));
  return wrap({ type: 'lookupTable', info });
}
