package checkout

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
)

// The refusals of a posted authorization (docs/checkout.md): 400 for what the customer signed
// wrongly, 409 for what the chain or the payment's state says no to.
const (
	CodeAuthorizationInvalid ErrorCode = "authorization_invalid" // 400, param names the field
	CodeAuthorizationExpired ErrorCode = "authorization_expired" // 400, param validBefore
	CodeAuthorizationUsed    ErrorCode = "authorization_used"    // 409, param nonce
	CodeGaslessNotOffered    ErrorCode = "gasless_not_offered"   // 409, param quoteId
)

// ErrorCode is the API's error.code.
type ErrorCode = domain.ErrorCode

// GaslessRequest is a TransferWithAuthorization the customer signed, as the page posts it.
type GaslessRequest struct {
	QuoteID      uuid.UUID
	EVMChainID   int64  // the domain's chainId
	TokenAddress string // the domain's verifyingContract
	From         string
	To           string
	Value        string // decimal integer, the token's smallest unit
	ValidAfter   int64
	ValidBefore  int64
	Nonce        string // 0x + 32 bytes
	Signature    string // 0x + r ‖ s ‖ v (65 bytes; v 27/28 or 0/1)
}

// SubmitGasless checks an authorization posted for a quote of p and stores it for the chain's
// relayer. Every refusal changes nothing. Checked, cheapest first: the quote is p's, active and
// offered without gas, the payment open with nothing received, none of its authorizations in
// flight and fewer than MaxFailedGasless failed (gaslessRefusal; the database holds the first
// rule too, for two posted at once); the domain's chain and token are
// the quote's; to is the deposit address, value the quote's amount plus the buyer's relay fee,
// validAfter 0, validBefore after now + GaslessMinValidity and not after the quote's expiry; the
// signature recovers to from in the token's own domain; the nonce is unused on chain
// (authorizationState) and here; from holds value (balanceOf by eth_call).
func (s *Service) SubmitGasless(ctx context.Context, p domain.Payment, r GaslessRequest) (store.GaslessAuthorization, error) {
	now := s.Now()
	var q *domain.Quote
	for _, x := range payments.Present(p, now).Quotes {
		if x.ID == r.QuoteID {
			q = &x
			break
		}
	}
	if q == nil {
		return store.GaslessAuthorization{}, errQuoteNotFound
	}
	if p.Status != domain.PaymentPending || !now.Before(p.ExpiresAt) {
		status := p.Status
		if status == domain.PaymentPending {
			status = domain.PaymentExpired
		}
		return store.GaslessAuthorization{}, fmt.Errorf("%w: the payment is %s", domain.ErrPaymentNotOpen, status)
	}
	if p.Received != nil {
		return store.GaslessAuthorization{}, fmt.Errorf("%w: part of the payment arrived already; send the rest to the deposit address", domain.ErrPaymentNotOpen)
	}
	if q.Status != domain.QuoteActive {
		return store.GaslessAuthorization{}, fmt.Errorf("%w: the quote is %s (refresh the quotes for a new one)", domain.ErrQuoteNotActive, q.Status)
	}
	if why := s.offerable(p, *q, now); why != "" {
		return store.GaslessAuthorization{}, domain.Refuse(CodeGaslessNotOffered, "quoteId", "this quote cannot be paid without gas: %s", why)
	}
	a, sig, err := parseAuthorization(r)
	if err != nil {
		return store.GaslessAuthorization{}, err
	}
	gs, err := s.Store.Read(ctx).PaymentGasless(p.ID)
	if err != nil {
		return store.GaslessAuthorization{}, err
	}
	for _, g := range gs {
		if strings.EqualFold(g.From, a.From.Hex()) && strings.EqualFold(g.Nonce, a.Nonce.Hex()) {
			return store.GaslessAuthorization{}, usedAuth("this authorization (its nonce) was posted already") // the same one again
		}
	}
	if err := gaslessRefusal(gs); err != nil {
		return store.GaslessAuthorization{}, err
	}
	if err := checkTerms(p, *q, r, a, now); err != nil {
		return store.GaslessAuthorization{}, err
	}
	o, err := s.offer(p, *q, tokensig.Domain{})
	if err != nil {
		return store.GaslessAuthorization{}, err
	}
	if !decimal.NewFromBigInt(a.Value, 0).Equal(o.Value) {
		if o.FeeAsset.IsPositive() {
			return store.GaslessAuthorization{}, invalidAuth("value", "value must be %s: the quote's %s and the relay fee of %s (%d cents), in the token's smallest unit",
				o.Value, q.ExpectedAmountAsset, o.FeeAsset, o.FeeCents)
		}
		return store.GaslessAuthorization{}, invalidAuth("value", "value must be the quote's amount, %s in the token's smallest unit", o.Value)
	}
	rctx, cancel := context.WithTimeout(ctx, s.gaslessReadTimeout())
	defer cancel()
	d, err := s.tokenDomain(rctx, q.Token)
	if err != nil {
		return store.GaslessAuthorization{}, fmt.Errorf("%w: %v", errChainUnreadable, err)
	}
	if signer, err := tokensig.Recover(d, a, sig); err != nil || signer != a.From {
		return store.GaslessAuthorization{}, domain.Invalid(domain.CodeSignatureInvalid, "signature",
			"the signature is not from's TransferWithAuthorization of these terms in %s's EIP-712 domain {name %q, version %q, chainId %d, verifyingContract %s}",
			q.Token.Symbol, d.Name, d.Version, d.ChainID, strings.ToLower(d.Contract.Hex()))
	}
	if err := s.checkOnChain(rctx, *q, a); err != nil {
		return store.GaslessAuthorization{}, err
	}
	g := store.GaslessAuthorization{ID: uuid.Must(uuid.NewV7()), PaymentID: p.ID, QuoteID: q.ID, ChainID: q.Token.Chain.ID,
		TokenID: q.Token.ID, From: strings.ToLower(a.From.Hex()), To: strings.ToLower(a.To.Hex()), Value: o.Value,
		ValidAfter: 0, ValidBefore: r.ValidBefore, Nonce: strings.ToLower(a.Nonce.Hex()), Signature: sig.Hex(),
		FeePaidBy: o.FeePaidBy, FeeCents: o.FeeCents, FeeAsset: o.FeeAsset, Status: store.GaslessAccepted, CreatedAt: now, UpdatedAt: now}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertGasless(g) })
	if errors.Is(err, store.ErrConflict) {
		return store.GaslessAuthorization{}, usedAuth("this authorization (its nonce) was posted already")
	}
	return g, err
}

// errChainUnreadable: the quote's chain did not answer a check (503: retry).
var errChainUnreadable = domain.ErrGaslessUnavailable

// gaslessReadTimeout is how long the chain reads checking one posted authorization may take.
func (s *Service) gaslessReadTimeout() time.Duration {
	if s.GaslessReadTimeout > 0 {
		return s.GaslessReadTimeout
	}
	return 10 * time.Second
}

func invalidAuth(param, format string, args ...any) error {
	return domain.Invalid(CodeAuthorizationInvalid, param, format, args...)
}

func usedAuth(format string, args ...any) error {
	return domain.Refuse(CodeAuthorizationUsed, "nonce", format, args...)
}

// parseAuthorization reads the posted numbers, nonce and signature (the API's patterns already
// shaped them; anything beyond a uint256 or not 65 bytes is refused here).
func parseAuthorization(r GaslessRequest) (tokensig.Authorization, tokensig.Signature, error) {
	value, ok := new(big.Int).SetString(r.Value, 10)
	if !ok || value.Sign() < 0 || value.BitLen() > 256 {
		return tokensig.Authorization{}, tokensig.Signature{}, invalidAuth("value", "value must be a uint256 in decimal")
	}
	nonce, err := hexutil.Decode(r.Nonce)
	if err != nil || len(nonce) != 32 {
		return tokensig.Authorization{}, tokensig.Signature{}, invalidAuth("nonce", "nonce must be 32 bytes in hex (0x…)")
	}
	sig, err := tokensig.ParseSignature(r.Signature)
	if err != nil {
		return tokensig.Authorization{}, tokensig.Signature{}, domain.Invalid(domain.CodeSignatureInvalid, "signature",
			"signature must be 65 bytes in hex (r ‖ s ‖ v), as eth_signTypedData_v4 answers")
	}
	a := tokensig.Authorization{From: common.HexToAddress(r.From), To: common.HexToAddress(r.To), Value: value,
		ValidAfter: big.NewInt(r.ValidAfter), ValidBefore: big.NewInt(r.ValidBefore), Nonce: common.BytesToHash(nonce)}
	return a, sig, nil
}

// checkTerms compares what was signed with the quote: chain, token, recipient and window.
func checkTerms(p domain.Payment, q domain.Quote, r GaslessRequest, a tokensig.Authorization, now time.Time) error {
	switch {
	case r.EVMChainID != q.Token.Chain.ID:
		return invalidAuth("evmChainId", "the quote is paid on chain %d (%s), not %d", q.Token.Chain.ID, q.Token.Chain.Name, r.EVMChainID)
	case !strings.EqualFold(r.TokenAddress, q.Token.ContractAddress):
		return invalidAuth("tokenAddress", "the quote is paid in %s at %s, not the token at %s", q.Token.Symbol,
			strings.ToLower(q.Token.ContractAddress), strings.ToLower(r.TokenAddress))
	case !strings.EqualFold(r.To, p.DepositAddress.Address):
		return invalidAuth("to", "to must be the payment's deposit address %s", p.DepositAddress.Address)
	case a.From == (common.Address{}) || strings.EqualFold(r.From, p.DepositAddress.Address):
		return invalidAuth("from", "from must be the paying account")
	case r.ValidAfter != 0:
		return invalidAuth("validAfter", "validAfter must be 0 (valid at once)")
	case r.ValidBefore > q.ExpiresAt.Unix():
		return invalidAuth("validBefore", "validBefore must not be after the quote's expiry (%d)", q.ExpiresAt.Unix())
	case r.ValidBefore < now.Unix()+int64(GaslessMinValidity.Seconds()):
		return domain.Invalid(CodeAuthorizationExpired, "validBefore", "the authorization expires at %d, too soon to be relayed "+
			"(it must be valid for %s more): sign again with the quote's expiry, after refreshing the quotes", r.ValidBefore, GaslessMinValidity)
	}
	return nil
}

// checkOnChain asks the chain whether the nonce is spent and whether from holds the value, beyond
// what its other authorizations in flight will take.
func (s *Service) checkOnChain(ctx context.Context, q domain.Quote, a tokensig.Authorization) error {
	c, token := s.gaslessChain(q.Token.Chain.ID), common.HexToAddress(q.Token.ContractAddress)
	used, err := chain.AuthorizationUsed(ctx, c, token, a.From, a.Nonce)
	if err != nil {
		return fmt.Errorf("%w: %v", errChainUnreadable, err)
	}
	if used {
		return usedAuth("the token has this authorization's nonce used or cancelled already: sign a new one")
	}
	bal, err := chain.ERC20Balance(ctx, c, token, a.From)
	if err != nil {
		return fmt.Errorf("%w: %v", errChainUnreadable, err)
	}
	// What from signed for other payments and is not mined yet will come off the same balance
	// first: accepted here, it would only fail at the relayer (or revert, on our gas).
	others, err := s.Store.Read(ctx).SignerGaslessInFlight(q.Token.ID, a.From.Hex())
	if err != nil {
		return err
	}
	pending := decimal.Zero
	for _, o := range others {
		if !o.RelayMined {
			pending = pending.Add(o.Value)
		}
	}
	have, value := decimal.NewFromBigInt(bal, 0), decimal.NewFromBigInt(a.Value, 0)
	whole := func(d decimal.Decimal) string { return money.WholeTokens(d, q.Token.Decimals) }
	switch {
	case have.LessThan(value):
		return domain.Refuse(domain.CodeInsufficientBalance, "from", "%s holds %s %s; this payment needs %s",
			strings.ToLower(a.From.Hex()), whole(have), q.Token.Symbol, whole(value))
	case have.LessThan(value.Add(pending)):
		return domain.Refuse(domain.CodeInsufficientBalance, "from", "%s holds %s %s; its other signed payments waiting to be relayed need %s and this one %s",
			strings.ToLower(a.From.Hex()), whole(have), q.Token.Symbol, whole(pending), whole(value))
	}
	return nil
}
