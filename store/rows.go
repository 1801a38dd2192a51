package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
)

// Private row structs: the database shape. Mappers below turn them into domain values.

type merchantRow struct {
	ID                 uuid.UUID `gorm:"primaryKey"`
	Name               string
	ShortName          string
	LogoURL            *string
	DisplayName        *string
	AccentColor        *string
	GaslessFeePaidBy   string
	DepositsEnabled    bool
	WithdrawalsEnabled bool
	CreatedAt          time.Time
}

func (merchantRow) TableName() string { return "merchants" }

type apiKeyRow struct {
	ID         uuid.UUID `gorm:"primaryKey"`
	MerchantID uuid.UUID
	Prefix     string
	KeyHash    []byte
	Livemode   bool
	CreatedAt  time.Time
	RevokedAt  *time.Time
	CreatedBy  *uuid.UUID // the person who made it from the dashboard; nil for the command line
}

func (apiKeyRow) TableName() string { return "api_keys" }

func (r apiKeyRow) domain() domain.APIKey {
	return domain.APIKey{ID: r.ID, MerchantID: r.MerchantID, Prefix: r.Prefix, Hash: r.KeyHash, Mode: domain.ModeOf(r.Livemode),
		CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, CreatedBy: r.CreatedBy}
}

type chainRow struct {
	ChainID               int64 `gorm:"primaryKey;autoIncrement:false"`
	Name                  string
	NativeSymbol          string
	NativeDecimals        int32
	IsTestnet             bool
	IsActive              bool
	ConvenienceFeeCents   int64
	RequiredConfirmations int32
	FinalizedTag          bool
	BlockExplorerURL      string `gorm:"column:block_explorer_url"`
	GaslessFeeCents       int64
}

func (chainRow) TableName() string { return "chains" }

type tokenRow struct {
	ID              string `gorm:"primaryKey"`
	ChainID         int64
	Symbol          string
	MarketAPIID     string `gorm:"column:market_api_id"`
	ContractAddress string
	Decimals        int32
	Type            string
	AssetType       string
	Status          string
	EIP3009         bool `gorm:"column:eip3009"`
	EIP2612         bool `gorm:"column:eip2612"`
}

func (tokenRow) TableName() string { return "tokens" }

type depositAddressRow struct {
	ID              uuid.UUID `gorm:"primaryKey"`
	MerchantID      uuid.UUID
	PaymentID       *uuid.UUID
	CustomerRefID   *string
	DerivationIndex int64
	Address         string
	Livemode        bool
	CreatedAt       time.Time
}

func (depositAddressRow) TableName() string { return "deposit_addresses" }

type paymentRow struct {
	ID                     uuid.UUID `gorm:"primaryKey"`
	MerchantID             uuid.UUID
	Livemode               bool
	Type                   domain.PaymentType
	AmountInCents          int64
	AmountDueCents         int64
	ConvenienceFeeCents    *int64
	MerchantFeeCents       *int64
	SwapFeeCents           *int64
	AmountMerchantNetCents int64
	Currency               string
	Status                 domain.PaymentStatus
	OrderID                *string
	CustomerRefID          *string
	RedirectURL            *string `gorm:"column:redirect_url"`
	CustomMetadata         *string
	SecretHash             []byte
	DepositAddressID       uuid.UUID
	SettlingQuoteID        *uuid.UUID
	ReceivedAmountAsset    decimal.NullDecimal
	ConfirmedAmountAsset   decimal.NullDecimal
	ExpiresAt              time.Time
	CreatedAt              time.Time
	UpdatedAt              time.Time
	Version                int64
}

func (paymentRow) TableName() string { return "payments" }

type quoteRow struct {
	ID                  uuid.UUID `gorm:"primaryKey"`
	PaymentID           uuid.UUID
	TokenID             string
	ChainID             int64
	ExpectedAmountAsset decimal.Decimal
	RateUSDAsset        decimal.Decimal `gorm:"column:rate_usd_asset"`
	AmountDueCents      *int64
	ConvenienceFeeCents int64
	ExpiresAt           time.Time
	Status              domain.QuoteStatus
	CreatedAt           time.Time
}

func (quoteRow) TableName() string { return "quotes" }

type paymentReceiptRow struct {
	PaymentID               uuid.UUID `gorm:"primaryKey"`
	QuoteID                 uuid.UUID
	TokenID                 string
	ChainID                 int64
	SettledAmountAsset      decimal.Decimal
	SettledAmountUSD        decimal.Decimal `gorm:"column:settled_amount_usd"`
	TxHash                  *string
	TxBlockNumber           *int64
	TxTimestamp             *time.Time
	TxSenderAddress         *string
	TxGasUsed               *int64
	TxTotalCost             decimal.NullDecimal
	TxTotalCostUSDFractions *int64 `gorm:"column:tx_total_cost_usd_fractions"`
	TxIsSponsored           *bool
	ProcessedBy             *domain.ProcessedBy
	TxRiskScore             *int32
	TxRiskSeverity          *string
	TxRiskProvider          *string
	Confirmations           int32
	RequiredConfirmations   int32
	CreatedAt               time.Time
}

func (paymentReceiptRow) TableName() string { return "payment_receipts" }

type withdrawalConfigRow struct {
	MerchantID           uuid.UUID `gorm:"primaryKey"`
	TokenSymbol          string
	MinAmountCents       int64
	MaxAmountCents       int64
	BackendWalletAddress string
	UpdatedAt            time.Time
}

func (withdrawalConfigRow) TableName() string { return "withdrawal_configs" }

type withdrawalConfigChainRow struct {
	MerchantID uuid.UUID `gorm:"primaryKey"`
	ChainID    int64     `gorm:"primaryKey;autoIncrement:false"`
}

func (withdrawalConfigChainRow) TableName() string { return "withdrawal_config_chains" }

type withdrawalRow struct {
	ID               uuid.UUID `gorm:"primaryKey"`
	MerchantID       uuid.UUID
	Livemode         bool
	AmountInCents    int64
	ChainID          int64
	TokenID          string
	RecipientAddress string
	Status           domain.WithdrawalStatus
	Currency         string
	OrderID          *string
	CustomMetadata   *string
	ErrorMessage     *string
	ApprovalRequired bool
	ApprovedBy       *uuid.UUID
	ApprovedByEmail  *string
	ApprovedAt       *time.Time
	CreatedBy        *uuid.UUID
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Version          int64
}

func (withdrawalRow) TableName() string { return "withdrawals" }

type withdrawalReceiptRow struct {
	WithdrawalID            uuid.UUID `gorm:"primaryKey"`
	TokenID                 string
	ChainID                 int64
	SettledAmountAsset      decimal.Decimal
	SettledAmountUSD        decimal.Decimal `gorm:"column:settled_amount_usd"`
	TxHash                  string
	TxBlockNumber           int64
	TxTimestamp             time.Time
	TxSenderAddress         string
	TxGasUsed               int64
	TxTotalCost             decimal.Decimal
	TxTotalCostUSDFractions int64 `gorm:"column:tx_total_cost_usd_fractions"`
	TxIsSponsored           bool
	ProcessedBy             domain.ProcessedBy
	CreatedAt               time.Time
}

func (withdrawalReceiptRow) TableName() string { return "withdrawal_receipts" }

type ledgerEntryRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	MerchantID   uuid.UUID
	Livemode     bool
	Kind         string
	AmountCents  int64
	PaymentID    *uuid.UUID
	WithdrawalID *uuid.UUID
	TransferID   *uuid.UUID
	RefundID     *uuid.UUID
	CreatedAt    time.Time
}

func (ledgerEntryRow) TableName() string { return "ledger_entries" }

type balanceLockRow struct {
	MerchantID uuid.UUID `gorm:"primaryKey"`
	Livemode   bool      `gorm:"primaryKey"`
}

func (balanceLockRow) TableName() string { return "balance_locks" }

type idempotencyRow struct {
	MerchantID   uuid.UUID `gorm:"primaryKey"`
	Key          string    `gorm:"primaryKey"`
	Operation    string
	RequestHash  []byte
	State        string
	StatusCode   *int
	ResponseBody []byte
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }

type eventRow struct {
	ID         string `gorm:"primaryKey"`
	Type       string
	Entity     string
	EntityID   uuid.UUID
	MerchantID uuid.UUID
	Livemode   bool
	Sequence   int64
	Payload    string
	Object     *string
	CreatedAt  time.Time
}

func (eventRow) TableName() string { return "events" }

func (r eventRow) domain() domain.Event {
	e := domain.Event{ID: r.ID, Type: domain.EventType(r.Type), Entity: domain.EntityKind(r.Entity), EntityID: r.EntityID,
		MerchantID: r.MerchantID, Mode: domain.ModeOf(r.Livemode), Sequence: r.Sequence, Payload: []byte(r.Payload), CreatedAt: r.CreatedAt.UTC()}
	if r.Object != nil {
		e.Object = []byte(*r.Object)
	}
	return e
}

type leaseRow struct {
	Name      string `gorm:"primaryKey"`
	Holder    string
	ExpiresAt time.Time
}

func (leaseRow) TableName() string { return "leases" }

type settingRow struct {
	Name  string `gorm:"primaryKey"`
	Value string
}

func (settingRow) TableName() string { return "settings" }

func (r merchantRow) domain() domain.Merchant {
	return domain.Merchant{ID: r.ID, Name: r.Name, ShortName: r.ShortName, LogoURL: r.LogoURL, DisplayName: r.DisplayName, AccentColor: r.AccentColor,
		GaslessFeePaidBy: domain.GaslessFeePayer(r.GaslessFeePaidBy).Or(), DepositsEnabled: r.DepositsEnabled,
		WithdrawalsEnabled: r.WithdrawalsEnabled, CreatedAt: r.CreatedAt}
}

func (r chainRow) domain() domain.Chain {
	return domain.Chain{ID: r.ChainID, Name: r.Name, NativeSymbol: r.NativeSymbol, NativeDecimals: r.NativeDecimals,
		IsTestnet: r.IsTestnet, Enabled: r.IsActive, ConvenienceFeeCents: r.ConvenienceFeeCents,
		RequiredConfirmations: r.RequiredConfirmations, FinalizedTag: r.FinalizedTag, BlockExplorerURL: r.BlockExplorerURL,
		GaslessFeeCents: r.GaslessFeeCents}
}

func (r tokenRow) domain(c domain.Chain) domain.Token {
	return domain.Token{ID: r.ID, Chain: c, Symbol: r.Symbol, MarketAPIID: r.MarketAPIID,
		ContractAddress: r.ContractAddress, Decimals: r.Decimals, Type: domain.TokenType(r.Type),
		AssetType: domain.AssetType(r.AssetType), Status: domain.TokenStatus(r.Status), EIP3009: r.EIP3009, EIP2612: r.EIP2612}
}

func (r depositAddressRow) domain() domain.DepositAddress {
	return domain.DepositAddress{ID: r.ID, MerchantID: r.MerchantID, PaymentID: r.PaymentID, CustomerRefID: r.CustomerRefID,
		DerivationIndex: r.DerivationIndex, Address: r.Address, Mode: domain.ModeOf(r.Livemode), CreatedAt: r.CreatedAt}
}
