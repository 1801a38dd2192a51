package payouts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// Withdrawals: which pending ones the hot wallet pays now, and the logical transaction that pays
// each. The transaction manager signs it with the withdrawal's move to processing.

// sendPending signs and sends pending withdrawals the hot wallet can fund, oldest first.
func (m *Manager) sendPending(ctx context.Context, res *RoundResult) error {
	// Every pending withdrawal is looked at (ids only, up to a bound), so the ones that wait —
	// a token the wallet lacks, a recipient a token refuses — never hold up the others.
	ids, err := m.Store.Read(ctx).PendingWithdrawals(m.Info.ID, 1000)
	if err != nil || len(ids) == 0 {
		return err
	}
	err = m.signEach(ctx, "withdrawal", ids, m.sendOne, res)
	if res.Waiting > 0 && m.Now().Sub(m.lastBlockedLog) > time.Minute {
		m.lastBlockedLog = m.Now()
		m.Log.Warn("withdrawals wait", "chain", chains.CAIP2(m.Info.ID), "pending", res.Waiting, "reason", res.Blocked)
	}
	return err
}

// signEach signs the payouts of ids (withdrawals or refunds, by one) until the round's batch is
// full; one that errs or waits never holds up the others. res counts what was signed and what
// waits, and why.
func (m *Manager) signEach(ctx context.Context, what string, ids []uuid.UUID, one func(context.Context, uuid.UUID) (bool, string, error), res *RoundResult) error {
	var errs []error
	for _, id := range ids {
		if res.Signed >= m.Config.Batch {
			break
		}
		signed, reason, err := one(ctx, id)
		switch {
		case err != nil:
			m.Log.Error("sign a payout", what, id, "err", err)
			errs = append(errs, err)
			res.Waiting++
			res.Blocked = err.Error()
		case signed:
			res.Signed++
		case reason != "":
			res.Waiting++
			res.Blocked = reason
		}
	}
	return errors.Join(errs...)
}

// sendOne signs one withdrawal's payout, or says why it waits.
func (m *Manager) sendOne(ctx context.Context, id uuid.UUID) (signed bool, reason string, err error) {
	w, err := m.Store.Read(ctx).WithdrawalByID(id, m.Catalog)
	if err != nil {
		return false, "", err
	}
	if w.Status != domain.WithdrawalPending || w.Approval.Waiting() {
		return false, "", nil // PendingWithdrawals leaves out those awaiting approval; read again here
	}
	amount, rate, err := m.amount(ctx, w)
	if err != nil {
		return false, "", err
	}
	// The token first: a node cannot estimate the gas of a transfer the wallet cannot make.
	if short, err := m.tokenShort(ctx, w.Token, amount); err != nil || short != "" {
		return false, short, err
	}
	o, err := m.payout(ctx, w, amount, rate)
	if err != nil {
		return false, "", err
	}
	tip, feeCap, err := m.tx.Fees(ctx)
	if err != nil {
		return false, "", err
	}
	if short, err := m.tx.HotShort(ctx, o, feeCap); err != nil || short != "" {
		return false, short, err
	}
	first, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := m.Core.UpdateWithdrawalTx(tx, w.ID, func(w *domain.Withdrawal) error {
			return w.TransitionTo(domain.WithdrawalProcessing)
		})
		return err
	})
	var te *domain.TransitionError
	if errors.As(err, &te) {
		return false, "", nil // cancelled meanwhile: nothing signed survives the rollback
	}
	if err != nil {
		return false, "", err
	}
	m.Log.Info("payout signed and stored", "withdrawal", w.ID, "chain", chains.CAIP2(m.Info.ID), "nonce", o.Nonce, "tx", first.Hash,
		"amount", o.AmountAsset.String(), "token", w.Token.ID)
	if !m.tx.PauseAfterSign(ctx, first) {
		return true, "", nil
	}
	return true, "", m.tx.Broadcast(ctx, o, first)
}

// amount converts a withdrawal's cents to the token's smallest unit at the current price
// (stablecoins pegged at 1.00), rounded down: never pay out more than the balance debited.
func (m *Manager) amount(ctx context.Context, w domain.Withdrawal) (decimal.Decimal, decimal.Decimal, error) {
	units, rate, err := m.convert(ctx, w.Token, w.AmountInCents)
	if err != nil {
		return decimal.Zero, decimal.Zero, fmt.Errorf("withdrawal %s: %w", w.ID, err)
	}
	return units, rate, nil
}

// convert is amount for cents of token (the dashboard's estimate computes exactly this).
func (m *Manager) convert(ctx context.Context, t domain.Token, cents int64) (decimal.Decimal, decimal.Decimal, error) {
	rate, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID, Stablecoin: t.Type == domain.Stablecoin})
	if err != nil {
		return decimal.Zero, decimal.Zero, err
	}
	if !rate.IsPositive() {
		return decimal.Zero, decimal.Zero, fmt.Errorf("price of %s is %s", t.Symbol, rate)
	}
	units, err := money.UnitsToSend(cents, rate, t.Decimals)
	if err != nil {
		return decimal.Zero, decimal.Zero, err
	}
	if !units.IsPositive() {
		return decimal.Zero, decimal.Zero, fmt.Errorf("%d cents is less than one unit of %s", cents, t.Symbol)
	}
	return units, rate, nil
}

// payout builds the logical transaction of a withdrawal (nonce and attempts come later).
func (m *Manager) payout(ctx context.Context, w domain.Withdrawal, amount, rate decimal.Decimal) (store.OutgoingTx, error) {
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(m.Wallet.Address().Hex()),
		Kind: store.TxPayout, WithdrawalID: &w.ID, TokenID: w.Token.ID, Recipient: w.RecipientAddress, AmountAsset: amount,
		RateUSD: rate.String(), CreatedAt: m.Now()}
	return o, m.transfer(ctx, &o, w.Token, 0)
}

// transfer fills in the transaction that sends o.AmountAsset of tok to o.Recipient: its to,
// value, call data and gas limit (gas, when not 0, is kept: a refund's amount is rebuilt after
// its fee is known, at the gas the fee was computed for).
func (m *Manager) transfer(ctx context.Context, o *store.OutgoingTx, tok domain.Token, gas uint64) error {
	recipient, amount := common.HexToAddress(o.Recipient), o.AmountAsset
	if tok.AssetType == domain.Native {
		if gas == 0 {
			// 21,000 to a plain account; a contract wallet (a Safe, an ERC-4337 account) needs more.
			est, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: m.Wallet.Address(), To: &recipient, Value: amount.BigInt()})
			if err != nil {
				return fmt.Errorf("estimate the payout's gas: %w", err)
			}
			if est > 21_000 {
				est = est * 5 / 4
			}
			gas = max(est, 21_000)
		}
		o.TxTo, o.TxValue, o.TxData, o.GasLimit = strings.ToLower(recipient.Hex()), amount, "", int64(gas)
		return nil
	}
	token := common.HexToAddress(tok.ContractAddress)
	data := chain.ERC20TransferCalldata(recipient, amount.BigInt())
	if gas == 0 {
		// The token's own estimate, with a margin: a transfer's cost varies with the recipient's
		// storage (first receipt costs more).
		est, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: m.Wallet.Address(), To: &token, Data: data})
		if err != nil {
			return fmt.Errorf("estimate the payout's gas: %w", err)
		}
		gas = est * 5 / 4
	}
	o.TxTo, o.TxValue, o.TxData, o.GasLimit = strings.ToLower(token.Hex()), decimal.Zero, hex.EncodeToString(data), int64(gas)
	return nil
}

// tokenShort says why the hot wallet cannot fund a payout's ERC-20 amount now ("" when it
// can), counting what signed transactions not yet mined will take.
func (m *Manager) tokenShort(ctx context.Context, tok domain.Token, amount decimal.Decimal) (string, error) {
	if tok.AssetType != domain.ERC20 {
		return "", nil
	}
	addr := m.Wallet.Address()
	bal, err := chain.ERC20Balance(ctx, m.Chain, common.HexToAddress(tok.ContractAddress), addr)
	if err != nil {
		return "", err
	}
	pending, err := m.Store.Read(ctx).UnminedOutflow(m.Info.ID, addr.Hex(), tok.ID)
	if err != nil {
		return "", err
	}
	have, need := decimal.NewFromBigInt(bal, 0), amount.Add(pending)
	if have.LessThan(need) {
		return fmt.Sprintf("the hot wallet %s holds %s %s (smallest unit); the payouts signed and this one need %s",
			strings.ToLower(addr.Hex()), have, tok.Symbol, need), nil
	}
	return "", nil
}
