// Package domain holds the entities of the payments gateway and the error vocabulary shared by
// the services, the store and the HTTP layer. It has no behaviour that touches I/O.
package domain

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Merchant owns payments, withdrawals, API keys and a balance.
type Merchant struct {
	ID                 uuid.UUID
	Name               string
	ShortName          string
	LogoURL            *string
	DisplayName        *string         // the name customers are shown (nil: ShortName); see Merchant.Shown
	AccentColor        *string         // the checkout page's accent, #rrggbb (nil: the page's own)
	GaslessFeePaidBy   GaslessFeePayer // who bears the relay gas of a payment made without gas (issue 24)
	DepositsEnabled    bool
	WithdrawalsEnabled bool
	CreatedAt          time.Time
	// Mode is the mode a request acts in for this merchant: its secret key's or its dashboard
	// token's, set by authentication and never stored (a merchant has both modes). The zero
	// value reads as test (Mode.Live), so a merchant loaded without it never reaches live money.
	Mode Mode
	// KeyID and KeyPrefix are the secret key a request authenticated with (the audit log's
	// actor), set by authentication and never stored; zero for every other credential.
	KeyID     uuid.UUID
	KeyPrefix string
	// KeyCreatedBy is the person who made that key from the dashboard (nil: the command line):
	// what the key creates counts as theirs for approvals.
	KeyCreatedBy *uuid.UUID
}

// APIKey is a merchant secret key as stored: only its hash and a display prefix.
type APIKey struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Prefix     string
	Hash       []byte
	Mode       Mode // live for sk_live_ keys, test for sk_test_ keys
	CreatedAt  time.Time
	RevokedAt  *time.Time
	CreatedBy  *uuid.UUID // the person who made it from the dashboard; nil for the command line
	// CreatedByEmail is that person's email as listed (nil when no person made it, or the
	// person's account is gone).
	CreatedByEmail *string
}

// Chain is an EVM chain. Enabled says whether this deployment serves it (configuration and data).
type Chain struct {
	ID                    int64
	Name                  string
	NativeSymbol          string
	NativeDecimals        int32
	IsTestnet             bool
	Enabled               bool
	ConvenienceFeeCents   int64
	RequiredConfirmations int32
	FinalizedTag          bool   // the node's `finalized` block may count as final before the depth
	BlockExplorerURL      string // empty when the chain has none
	// GaslessFeeCents is the relay fee a buyer pays for a payment made without gas when the
	// merchant passes the gas on (GaslessFeeBuyer): catalogue data, like the convenience fee.
	GaslessFeeCents int64
}

// Token is an asset on a chain.
type Token struct {
	ID              string
	Chain           Chain
	Symbol          string
	MarketAPIID     string
	ContractAddress string
	Decimals        int32
	Type            TokenType
	AssetType       AssetType
	Status          TokenStatus
	EIP3009         bool // the contract implements transferWithAuthorization
	EIP2612         bool // the contract implements permit
}

// TokenType says whether a token's USD price is pegged.
type TokenType string

// Token types.
const (
	Stablecoin TokenType = "stablecoin"
	Volatile   TokenType = "volatile"
)

// AssetType says how a token moves on chain.
type AssetType string

// Asset types.
const (
	Native AssetType = "native"
	ERC20  AssetType = "erc20"
)

// TokenStatus says whether a token may be quoted and paid out.
type TokenStatus string

// Token states.
const (
	TokenActive     TokenStatus = "active"
	TokenDeprecated TokenStatus = "deprecated"
	TokenBlocked    TokenStatus = "blocked"
)

// PaymentType is a fixed-amount payment or a customer-chosen deposit.
type PaymentType string

// Payment types.
const (
	TypePayment PaymentType = "payment"
	TypeDeposit PaymentType = "deposit"
)

// DepositAddress is a derived EVM address. PaymentID is nil for an address shared by one
// customer's deposits.
type DepositAddress struct {
	ID              uuid.UUID
	MerchantID      uuid.UUID
	PaymentID       *uuid.UUID
	CustomerRefID   *string
	DerivationIndex int64
	Address         string
	Mode            Mode // a customer's reusable address is per mode
	CreatedAt       time.Time
}

// Quote fixes a token, a rate and an expected amount for a payment.
type Quote struct {
	ID                  uuid.UUID
	PaymentID           uuid.UUID
	Token               Token
	ExpectedAmountAsset decimal.Decimal // integer, smallest unit
	RateUSDAsset        decimal.Decimal
	AmountDueCents      *int64
	ConvenienceFeeCents int64
	TokenPriceUSD       *decimal.Decimal
	ExpiresAt           time.Time
	Status              QuoteStatus
	CreatedAt           time.Time
}

// PaymentReceipt records how a payment settled.
type PaymentReceipt struct {
	PaymentID               uuid.UUID
	QuoteID                 uuid.UUID
	Token                   Token
	SettledAmountAsset      decimal.Decimal
	SettledAmountUSD        decimal.Decimal
	TxHash                  *string
	TxBlockNumber           *int64
	TxTimestamp             *time.Time
	TxSenderAddress         *string
	TxGasUsed               *int64
	TxTotalCost             *decimal.Decimal
	TxTotalCostUSDFractions *int64
	TxIsSponsored           *bool
	ProcessedBy             *ProcessedBy
	TxRiskScore             *int32
	TxRiskSeverity          *string
	TxRiskProvider          *string
	Confirmations           int32
	RequiredConfirmations   int32
	CreatedAt               time.Time
}

// Received is what a payment has received on chain, in the smallest unit of the quote it is
// settling on: every transfer still in the canonical chain (Amount) and those with their
// confirmations (Confirmed). The lifecycle core keeps it with the payment.
type Received struct {
	QuoteID   uuid.UUID
	Amount    decimal.Decimal
	Confirmed decimal.Decimal
}

// Payment is a fixed-amount payment or a deposit.
type Payment struct {
	ID                     uuid.UUID
	Merchant               Merchant
	Mode                   Mode // its key's: quoted only on chains of this mode
	Type                   PaymentType
	AmountInCents          int64
	AmountDueCents         int64
	ConvenienceFeeCents    *int64
	MerchantFeeCents       *int64
	SwapFeeCents           *int64
	AmountMerchantNetCents int64
	Currency               string
	Status                 PaymentStatus
	OrderID                *string
	CustomerRefID          *string
	RedirectURL            *string
	CustomMetadata         *string
	SecretHash             []byte
	DepositAddress         DepositAddress
	Quotes                 []Quote
	Receipt                *PaymentReceipt
	Received               *Received // what arrived on chain for the quote it settles on; nil before a transfer is seen
	AmountRefundedCents    int64     // its refunds' cents, not failed or cancelled (read with it; refunds change it)
	ExpiresAt              time.Time
	CreatedAt              time.Time
	UpdatedAt              time.Time
	Version                int64 // bumped by every committed change; its events are numbered by it
}

// WithdrawalConfig is a merchant's withdrawal policy.
type WithdrawalConfig struct {
	MerchantID           uuid.UUID
	ChainIDs             []int64
	TokenSymbol          string
	MinAmountCents       int64
	MaxAmountCents       int64
	BackendWalletAddress string
	UpdatedAt            time.Time
}

// WithdrawalReceipt records a completed withdrawal's transaction.
type WithdrawalReceipt struct {
	WithdrawalID            uuid.UUID
	Token                   Token
	SettledAmountAsset      decimal.Decimal
	SettledAmountUSD        decimal.Decimal
	TxHash                  string
	TxBlockNumber           int64
	TxTimestamp             time.Time
	TxSenderAddress         string
	TxGasUsed               int64
	TxTotalCost             decimal.Decimal
	TxTotalCostUSDFractions int64
	TxIsSponsored           bool
	ProcessedBy             ProcessedBy
	CreatedAt               time.Time
}

// Withdrawal is a payout from the merchant's balance.
type Withdrawal struct {
	ID               uuid.UUID
	MerchantID       uuid.UUID
	Mode             Mode // its key's, and its chain's
	AmountInCents    int64
	Chain            Chain
	Token            Token
	RecipientAddress string
	Status           WithdrawalStatus
	Currency         string
	OrderID          *string
	CustomMetadata   *string
	ErrorMessage     *string
	Receipt          *WithdrawalReceipt
	// Approval: whether a second person must approve it before it is sent (the payout policy
	// decides at creation), who created it and who approved it.
	Approval  Approval
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64 // bumped by every committed change; its events are numbered by it
}

// Page is a list window; Total counts every match.
type Page struct {
	Limit  int32
	Offset int32
	Total  int64
}

// Shown is the name the merchant's customers see: its display name when set, else its short
// name, else its name.
func (m Merchant) Shown() string {
	switch {
	case m.DisplayName != nil && *m.DisplayName != "":
		return *m.DisplayName
	case m.ShortName != "":
		return m.ShortName
	}
	return m.Name
}
