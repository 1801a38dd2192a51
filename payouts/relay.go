package payouts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/tokensig"
	"github.com/paymentsd/paymentsd/txmgr"
)

// Relaying payments made without gas (issue 24): the checkout stored a customer's signed
// EIP-3009 transfer to a deposit address (store.GaslessAuthorization, accepted); the chain's hot
// wallet submits it as transferWithAuthorization and pays the gas. The relay transaction is an
// ordinary outgoing transaction of the hot wallet (kind payout, neither a withdrawal's nor a
// refund's): signed and stored with the authorization's move to submitted in one database
// transaction, broadcast only after that commits, resent and bumped like any payout, so it goes
// out exactly once across crashes (and the token itself refuses a second use of the nonce). The
// transfer it makes is the watcher's to record and settle, like any transfer to the address; its
// receipt at the chain's depth makes the authorization relayed, or failed when it reverted. An
// authorization that can no longer succeed is failed without a transaction; the payment stays
// payable the normal way either way.

// relayMargin is the least time an authorization must still be valid to be submitted: a
// transaction mined after validBefore reverts, and its gas is lost.
const relayMargin = 15

// relayBatch is the most authorizations a round takes up.
const relayBatch = 20

// relayGaslessPayments submits the chain's accepted authorizations.
func (m *Manager) relayGaslessPayments(ctx context.Context) error {
	open, err := m.Store.Read(ctx).AcceptedGasless(m.Info.ID, relayBatch)
	if err != nil || len(open) == 0 {
		return err
	}
	var errs []error
	for _, g := range open {
		if err := m.relay(ctx, g); err != nil {
			m.Log.Error("relay a payment made without gas", "chain", chains.CAIP2(m.Info.ID), "authorization", g.ID, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// relay submits one accepted authorization, or fails it when it can no longer succeed.
func (m *Manager) relay(ctx context.Context, g store.GaslessAuthorization) error {
	now := m.Now()
	fail := func(why string) error {
		m.Log.Warn("payment without gas not relayed", "chain", chains.CAIP2(m.Info.ID), "authorization", g.ID, "payment", g.PaymentID,
			"reason", why)
		err := m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishGasless(g.ID, []store.GaslessStatus{store.GaslessAccepted}, store.GaslessFailed, nil, &why, now)
		})
		if errors.Is(err, store.ErrConflict) {
			return nil // moved on meanwhile
		}
		return err
	}
	p, err := m.Store.Read(ctx).PaymentByID(g.PaymentID, m.Catalog)
	if err != nil {
		return err
	}
	if p.Status != domain.PaymentPending || p.Received != nil {
		return fail(fmt.Sprintf("the payment is %s with a transfer already: it was paid another way before the authorization was relayed", p.Status))
	}
	if g.ValidBefore <= now.Unix()+relayMargin {
		return fail("the authorization expired before it could be relayed (validBefore passed)")
	}
	tok, ok := m.Catalog.Tokens[g.TokenID]
	if !ok {
		return fmt.Errorf("authorization %s: token %s is not in the catalogue", g.ID, g.TokenID)
	}
	a, sig, err := decodeAuthorization(g)
	if err != nil {
		return fail(err.Error())
	}
	// One relay per signer in flight: the chain's balance does not show a relay not yet mined,
	// so two relays checked against one balance could both go out and all but one revert, on our
	// gas. This one waits (accepted) until the other is final, then is checked against what is left.
	others, err := m.Store.Read(ctx).SignerGaslessInFlight(g.TokenID, g.From)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != g.ID && o.Status == store.GaslessSubmitted {
			m.Log.Info("payment without gas waits for the signer's other relay", "chain", chains.CAIP2(m.Info.ID),
				"authorization", g.ID, "other", o.ID)
			return nil
		}
	}
	token := common.HexToAddress(tok.ContractAddress)
	used, err := chain.AuthorizationUsed(ctx, m.Chain, token, a.From, a.Nonce)
	if err != nil {
		return err
	}
	if used {
		return fail("the token has the authorization's nonce used or cancelled already")
	}
	// A transfer the watcher has not recorded yet may have paid the payment: relaying would pay
	// it twice.
	paid, err := chain.ERC20Balance(ctx, m.Chain, token, a.To)
	if err != nil {
		return err
	}
	if paid.Sign() > 0 {
		return fail(fmt.Sprintf("the deposit address holds %s of the token already: it was paid another way before the authorization was relayed", paid))
	}
	bal, err := chain.ERC20Balance(ctx, m.Chain, token, a.From)
	if err != nil {
		return err
	}
	if bal.Cmp(a.Value) < 0 {
		return fail(fmt.Sprintf("the payer holds %s of the %s signed for", bal, a.Value))
	}
	data, err := chain.TransferWithAuthorizationCalldata(a, sig)
	if err != nil {
		return fail(err.Error())
	}
	hot := m.Wallet.Address()
	gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: hot, To: &token, Data: data})
	if err != nil {
		if errors.Is(err, chain.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		return fail(fmt.Sprintf("the token refuses the transfer: %v", err))
	}
	tip, feeCap, err := m.tx.Fees(ctx)
	if err != nil {
		return err
	}
	// AmountAsset is what the transaction takes of its sender's TokenID (UnminedOutflow sums it
	// against the hot wallet's balance): a relay moves the customer's tokens, none of ours. The
	// value relayed is the authorization's.
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(hot.Hex()), Kind: store.TxPayout,
		TokenID: tok.ID, Recipient: g.To, AmountAsset: decimal.Zero, TxTo: strings.ToLower(token.Hex()), TxValue: decimal.Zero,
		TxData: hex.EncodeToString(data), GasLimit: int64(gas + gas/4), CreatedAt: now}
	if short, err := m.tx.HotShort(ctx, o, feeCap); err != nil || short != "" {
		if err == nil {
			m.Log.Warn("payment without gas waits: the hot wallet cannot pay the relay's gas", "chain", chains.CAIP2(m.Info.ID),
				"authorization", g.ID, "reason", short)
		}
		return err // waits for the hot wallet until its validBefore draws near, then fails
	}
	att, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		return tx.SubmitGasless(g.ID, o.ID, o.Attempts[0].Hash, now)
	})
	if errors.Is(err, store.ErrConflict) {
		// Moved on since the checks (another relayer took it, or it failed; or another process
		// took the nonce): the signed transaction was rolled back with it and nothing goes out;
		// the next round looks again. A lost race, not this round's error.
		m.Log.Info("payment without gas moved on before it was relayed", "chain", chains.CAIP2(m.Info.ID), "authorization", g.ID)
		return nil
	}
	if err != nil {
		return err
	}
	m.Log.Info("payment without gas relayed", "chain", chains.CAIP2(m.Info.ID), "payment", g.PaymentID, "from", g.From,
		"amount", g.Value.String(), "tx", att.Hash)
	if !m.tx.PauseAfterSign(ctx, att) {
		return nil // the stored bytes go out at the next round
	}
	return m.tx.Broadcast(ctx, o, att)
}

// decodeAuthorization is a stored authorization as the token takes it.
func decodeAuthorization(g store.GaslessAuthorization) (tokensig.Authorization, tokensig.Signature, error) {
	sig, err := tokensig.ParseSignature(g.Signature)
	if err != nil {
		return tokensig.Authorization{}, tokensig.Signature{}, err
	}
	a := tokensig.Authorization{From: common.HexToAddress(g.From), To: common.HexToAddress(g.To), Value: g.Value.BigInt(),
		ValidAfter: big.NewInt(g.ValidAfter), ValidBefore: big.NewInt(g.ValidBefore), Nonce: common.HexToHash(g.Nonce)}
	return a, sig, nil
}

// isRelay reports whether an outgoing transaction may relay a gasless payment: a payout of the
// hot wallet for neither a withdrawal nor a refund.
func isRelay(o store.OutgoingTx) bool {
	return o.Kind == store.TxPayout && o.WithdrawalID == nil && o.RefundID == nil
}

// settleRelay records a relay transaction's outcome on its authorization, with the transaction's.
func (m *Manager) settleRelay(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record) error {
	why := (*string)(nil)
	to := store.GaslessRelayed
	if !f.Succeeded {
		msg := fmt.Sprintf("the relay transaction %s reverted on chain (block %d) and moved nothing: the authorization expired "+
			"or its nonce was used by another submission first; the payment stays payable the normal way", f.Hash, f.Receipt.BlockNumber.Int64())
		why, to = &msg, store.GaslessFailed
	}
	return m.finishRelay(ctx, o, to, &f.Hash, why, record)
}

// abandonRelay fails an authorization whose relay transaction belongs to a chain that no longer
// exists (a devnet restarted).
func (m *Manager) abandonRelay(ctx context.Context, o store.OutgoingTx, reason string, record txmgr.Record) error {
	return m.finishRelay(ctx, o, store.GaslessFailed, nil, &reason, record)
}

func (m *Manager) finishRelay(ctx context.Context, o store.OutgoingTx, to store.GaslessStatus, hash, why *string, record txmgr.Record) error {
	g, err := m.Store.Read(ctx).GaslessByOutgoing(o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return record(nil)
	}
	if err != nil {
		return err
	}
	now := m.Now()
	return record(func(tx *store.Tx) error {
		err := tx.FinishGasless(g.ID, []store.GaslessStatus{store.GaslessSubmitted}, to, hash, why, now)
		if errors.Is(err, store.ErrConflict) {
			return nil // finished already
		}
		return err
	})
}
