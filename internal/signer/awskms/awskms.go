// Package awskms keeps wallet keys in AWS KMS. Each wallet's key is an
// asymmetric ECC_NIST_EDWARDS25519 SIGN_VERIFY key, named by an alias made
// of the wallet's id and tagged with it; KMS signs a message
// (ED25519_SHA_512, MessageType RAW: PureEdDSA, what Solana verifies) and
// the private key never leaves it.
package awskms

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// DefaultAliasPrefix begins every wallet key's alias unless configured:
// alias/agentwallet-<wallet id>.
const DefaultAliasPrefix = "agentwallet-"

// DefaultTimeout bounds one operation, its retry included, unless
// configured.
const DefaultTimeout = 5 * time.Second

// WalletTag is the tag key whose value is the wallet id, on every key Make
// makes: a key whose alias was never made is still found by it.
const WalletTag = "agentwallet:wallet"

// deletionWindow is the waiting period, in days, before KMS deletes a key
// Make could not finish: the shortest KMS allows.
const deletionWindow = 7

// maxMessage is the longest message KMS signs raw.
const maxMessage = 4096

// Config says which KMS to use and how.
type Config struct {
	// Region is the AWS Region (AWS_REGION); "" takes the default chain's.
	Region string
	// Endpoint overrides the KMS endpoint URL (AWS_KMS_ENDPOINT), for a
	// VPC endpoint or a test server; "" is the Region's public endpoint.
	Endpoint string
	// AliasPrefix begins each key's alias after "alias/"
	// (AWS_KMS_ALIAS_PREFIX); "" is DefaultAliasPrefix.
	AliasPrefix string
	// Credentials signs requests; nil is the SDK's default chain
	// (environment, shared config and credentials files, SSO, web
	// identity, container and instance roles).
	Credentials aws.CredentialsProvider
	// Timeout bounds each operation; 0 is DefaultTimeout.
	Timeout time.Duration
}

// ErrNameInUse means the wallet's alias names a key already: Make never
// adopts a key it did not make.
var ErrNameInUse = errors.New("the wallet's KMS alias names a key already")

// Signer makes and signs with Ed25519 keys in AWS KMS. It is a
// signer.Keeper and safe for concurrent use.
type Signer struct {
	client  *kms.Client
	prefix  string
	timeout time.Duration
}

var _ signer.Keeper = (*Signer)(nil)

var validPrefix = regexp.MustCompile(`^[a-zA-Z0-9/_-]{0,64}$`)

// New makes a Signer for cfg, loading the SDK's default configuration. It
// does not contact KMS: Check does. An operation is tried at most twice,
// a quarter second apart at most, within cfg.Timeout: a throttled or
// failing KMS answers the caller quickly, and the caller's queue retries.
func New(ctx context.Context, cfg Config) (*Signer, error) {
	prefix := cfg.AliasPrefix
	if prefix == "" {
		prefix = DefaultAliasPrefix
	}
	if !validPrefix.MatchString(prefix) || strings.HasPrefix(prefix, "aws/") {
		return nil, fmt.Errorf("aws kms: alias prefix %q: letters, digits, /, _ and - only, not aws/", prefix)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(timeout)),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(cfg.Credentials))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws kms: load configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, errors.New("aws kms: no region (AWS_REGION)")
	}
	if awsCfg.Credentials != nil {
		awsCfg.Credentials = marked{awsCfg.Credentials}
	}
	client := kms.NewFromConfig(awsCfg, func(o *kms.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.RetryMaxAttempts = 0 // AWS_MAX_ATTEMPTS would wrap the retryer below
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 2
			so.MaxBackoff = 250 * time.Millisecond
		})
	})
	return &Signer{client: client, prefix: prefix, timeout: timeout}, nil
}

// Backend is signer.AWSKMS.
func (s *Signer) Backend() signer.Backend { return signer.AWSKMS }

// Alias is the alias naming the key of the wallet whose id is name.
func (s *Signer) Alias(name string) string { return "alias/" + s.prefix + name }

// Make makes a KMS key for the wallet whose id is name: an
// ECC_NIST_EDWARDS25519 SIGN_VERIFY key tagged with the id, then its
// alias, then reads its public key. It refuses a name whose alias exists
// (ErrNameInUse). Should the alias or the public key fail once the key is
// made, the key is scheduled for deletion (7 days), so nothing is left
// half-made; the error says if that failed too.
func (s *Signer) Make(ctx context.Context, name string) (signer.Key, error) {
	if err := checkName(name); err != nil {
		return signer.Key{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	alias := s.Alias(name)

	_, err := s.client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(alias)})
	switch {
	case err == nil:
		return signer.Key{}, fmt.Errorf("aws kms: make key %s: %w", alias, ErrNameInUse)
	case !errorCode(err, "NotFoundException"):
		return signer.Key{}, s.failure(ctx, "describe "+alias, err)
	}

	made, err := s.client.CreateKey(ctx, &kms.CreateKeyInput{
		KeySpec:     types.KeySpecEccNistEdwards25519,
		KeyUsage:    types.KeyUsageTypeSignVerify,
		Description: aws.String("agentwallet wallet " + name),
		Tags:        []types.Tag{{TagKey: aws.String(WalletTag), TagValue: aws.String(name)}},
	})
	if err != nil {
		return signer.Key{}, s.failure(ctx, "create key", err)
	}
	meta := made.KeyMetadata
	if meta == nil || meta.Arn == nil {
		return signer.Key{}, errors.New("aws kms: create key answered no key ARN")
	}
	arn := *meta.Arn
	pub, err := s.finish(ctx, arn, alias, meta)
	if err != nil {
		return signer.Key{}, errors.Join(err, s.discard(ctx, arn))
	}
	return signer.Key{Public: pub, Backend: signer.AWSKMS, Ref: arn}, nil
}

// finish checks a made key, names it and reads its public key.
func (s *Signer) finish(ctx context.Context, arn, alias string, meta *types.KeyMetadata) (ed25519.PublicKey, error) {
	if meta.KeySpec != types.KeySpecEccNistEdwards25519 || meta.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("aws kms: key %s is %s %s, not what was asked", arn, meta.KeySpec, meta.KeyUsage)
	}
	_, err := s.client.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(arn)})
	switch {
	case errorCode(err, "AlreadyExistsException"):
		return nil, fmt.Errorf("aws kms: create %s: %w", alias, ErrNameInUse)
	case errorCode(err, "NotFoundException"):
		return nil, unavailable(notYetVisible, fmt.Errorf("aws kms create %s: %w", alias, err))
	case err != nil:
		return nil, s.failure(ctx, "create "+alias, err)
	}
	out, err := s.client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(arn)})
	switch {
	case errorCode(err, "NotFoundException"):
		return nil, unavailable(notYetVisible, fmt.Errorf("aws kms get public key: %w", err))
	case err != nil:
		return nil, s.failure(ctx, "get public key", err)
	}
	if out.KeySpec != types.KeySpecEccNistEdwards25519 {
		return nil, fmt.Errorf("aws kms: public key of %s is %s", arn, out.KeySpec)
	}
	parsed, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("aws kms: public key of %s: %w", arn, err)
	}
	pub, ok := parsed.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("aws kms: public key of %s is a %T, not Ed25519", arn, parsed)
	}
	return pub, nil
}

// notYetVisible is the reason a key just made is not found: KMS is
// eventually consistent, and a retry of Make makes a fresh key.
const notYetVisible = "the new KMS key is not visible yet"

// discard schedules the deletion of a key Make could not finish. It runs
// even if ctx is done: the key exists either way.
func (s *Signer) discard(ctx context.Context, arn string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	_, err := s.client.ScheduleKeyDeletion(ctx, &kms.ScheduleKeyDeletionInput{
		KeyId:               aws.String(arn),
		PendingWindowInDays: aws.Int32(deletionWindow),
	})
	if err != nil {
		return fmt.Errorf("aws kms: key %s is left half-made, its deletion failed: %w", arn, err)
	}
	return nil
}

// Sign signs message with key's KMS key (ED25519_SHA_512, RAW) and
// returns the 64-byte signature, verified against key.Public.
func (s *Signer) Sign(ctx context.Context, key signer.Key, message []byte) ([]byte, error) {
	if key.Backend != signer.AWSKMS {
		return nil, fmt.Errorf("aws kms: key is held by the %q backend", key.Backend)
	}
	if key.Ref == "" {
		return nil, errors.New("aws kms: key has no KMS key id")
	}
	if len(key.Public) != ed25519.PublicKeySize {
		return nil, errors.New("aws kms: key has no public key to verify against")
	}
	if len(message) == 0 || len(message) > maxMessage {
		return nil, fmt.Errorf("aws kms: a message to sign is 1 to %d bytes, not %d", maxMessage, len(message))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.Sign(ctx, &kms.SignInput{
		KeyId:            aws.String(key.Ref),
		Message:          message,
		MessageType:      types.MessageTypeRaw,
		SigningAlgorithm: types.SigningAlgorithmSpecEd25519Sha512,
	})
	if err != nil {
		return nil, s.failure(ctx, "sign", err)
	}
	if len(out.Signature) != ed25519.SignatureSize || !ed25519.Verify(key.Public, message, out.Signature) {
		return nil, fmt.Errorf("aws kms: sign with %s: %w", key.Ref, signer.ErrBadSignature)
	}
	return out.Signature, nil
}

// Check lists one key: KMS answers, the credentials are good and the
// policy allows kms:ListKeys.
func (s *Signer) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.client.ListKeys(ctx, &kms.ListKeysInput{Limit: aws.Int32(1)}); err != nil {
		return s.failure(ctx, "list keys", err)
	}
	return nil
}

// unavailableCodes are the errors meaning KMS cannot sign or make keys
// now, and what to tell a caller.
var unavailableCodes = map[string]string{
	"ThrottlingException":                 "KMS is throttling requests",
	"LimitExceededException":              "a KMS quota is reached",
	"KMSInternalException":                "KMS had an internal error",
	"InternalFailure":                     "KMS had an internal error",
	"ServiceUnavailable":                  "KMS is unavailable",
	"ServiceUnavailableException":         "KMS is unavailable",
	"DependencyTimeoutException":          "KMS timed out",
	"KMSInvalidStateException":            "the KMS key is not in a state to be used (pending deletion, disabled or unavailable)",
	"DisabledException":                   "the KMS key is disabled",
	"KeyUnavailableException":             "the KMS key is unavailable",
	"CustomKeyStoreInvalidStateException": "the KMS key's custom key store is unavailable",
	"AccessDeniedException":               "KMS denied access: the credentials' policy does not allow it",
	"UnrecognizedClientException":         "KMS does not recognise the credentials",
	"InvalidSignatureException":           "KMS refused the request's signature (credentials or clock)",
	"IncompleteSignatureException":        "KMS refused the request's signature (credentials or clock)",
	"MissingAuthenticationTokenException": "KMS refused the request's signature (credentials or clock)",
	"ExpiredTokenException":               "the AWS credentials have expired",
}

// failure translates an operation's error: what means KMS cannot answer now
// becomes *signer.UnavailableError; the rest (a missing key, a bad
// request) an error.
func (s *Signer) failure(ctx context.Context, op string, err error) error {
	wrapped := fmt.Errorf("aws kms %s: %w", op, err)
	if errors.Is(ctx.Err(), context.Canceled) {
		return wrapped // the caller gave up; KMS did nothing wrong
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		if reason, ok := unavailableCodes[ae.ErrorCode()]; ok {
			return unavailable(reason, wrapped)
		}
		var re *awshttp.ResponseError
		if ae.ErrorFault() == smithy.FaultServer || errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
			return unavailable("KMS had a server error", wrapped)
		}
		return wrapped
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return unavailable("KMS did not answer in time", wrapped)
	}
	var ce *credentialsError
	var se *v4.SigningError
	if errors.As(err, &ce) || errors.As(err, &se) {
		return unavailable("no usable AWS credentials", wrapped)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return unavailable("KMS had a server error", wrapped)
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return unavailable("cannot reach KMS", wrapped)
	}
	return wrapped
}

// marked marks a credentials provider's failures, which the SDK reports
// as plain text, so failure can tell them apart.
type marked struct{ aws.CredentialsProvider }

func (m marked) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return creds, &credentialsError{err}
	}
	return creds, nil
}

type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return e.err.Error() }

func (e *credentialsError) Unwrap() error { return e.err }

func unavailable(reason string, err error) error {
	return &signer.UnavailableError{Backend: signer.AWSKMS, Reason: reason, Err: err}
}

func errorCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// validName is what a wallet id may be to end an alias.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("aws kms: %q cannot name a key (letters, digits, - and _, at most 128)", name)
	}
	return nil
}
