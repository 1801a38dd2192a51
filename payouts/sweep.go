package payouts

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// Sweeping moves what customers paid into deposit addresses on to the hot wallet, through the
// same transaction manager as payouts: nonces in the database, every signed transaction stored
// before it is broadcast, followed to its confirmations. A native balance is sent less its gas;
// an ERC-20 balance needs gas at the deposit address first, which a top-up from the hot wallet
// provides. Each sweep covers the confirmed transfers recorded at the address up to the block
// its balance was read at, so the treasury can tell swept from unswept.

// DepositKeys derives the signing key of a deposit address (wallet.Keys). Only a process that
// sweeps holds it.
type DepositKeys interface {
	Key(index uint32) (*ecdsa.PrivateKey, error)
}

// maxSweepsPerPass bounds what one pass signs: top-ups take the hot wallet's nonces, ahead of
// withdrawals, and nodes limit how many transactions of one sender they hold.
const maxSweepsPerPass = 20

// requestTimeout is how long an operator's request may stay open before it is answered with
// what is still stuck.
const requestTimeout = 30 * time.Minute

// sweepRound advances the sweeps in flight, and starts new ones when the interval is due or an
// operator asked (paymentsd sweep).
func (m *Manager) sweepRound(ctx context.Context, res *RoundResult) error {
	if err := m.advanceSweeps(ctx, res); err != nil {
		return err
	}
	reqs, err := m.Store.Read(ctx).OpenSweepRequests(m.Info.ID)
	if err != nil {
		return err
	}
	now := m.Now()
	var ids, stale []uuid.UUID
	for _, r := range reqs {
		if now.Sub(r.CreatedAt) > requestTimeout {
			stale = append(stale, r.ID)
		} else {
			ids = append(ids, r.ID)
		}
	}
	if len(stale) > 0 {
		if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.FinishSweepRequests(stale, fmt.Sprintf("gave up after %s: sweeps still in flight or failing "+
				"(paymentsd treasury shows what is unswept; the worker's log says why)", requestTimeout), now)
		}); err != nil {
			return err
		}
	}
	forced := len(ids) > 0
	if !forced && (m.Config.SweepEvery <= 0 || now.Sub(m.lastSweep) < m.Config.SweepEvery) {
		return nil
	}
	m.lastSweep = now
	if forced {
		if err := m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.StartSweepRequests(ids, now) }); err != nil {
			return err
		}
	}
	cands, err := m.Store.Read(ctx).SweepCandidates(m.Info.ID, 5000)
	if err != nil {
		return err
	}
	// An address's tokens first, its native coin last: the native sweep takes all the gas there.
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Address != cands[j].Address {
			return cands[i].Address < cands[j].Address
		}
		return m.Catalog.Tokens[cands[i].TokenID].AssetType == domain.ERC20 && m.Catalog.Tokens[cands[j].TokenID].AssetType != domain.ERC20
	})
	var errs, skipped []string
	started := 0
	busy := map[string]bool{} // one sweep in flight per address: its tokens share its nonces and its gas
	for _, c := range cands {
		if started >= maxSweepsPerPass {
			break
		}
		if busy[c.Address] {
			continue
		}
		ok, why, err := m.startSweep(ctx, c, forced)
		switch {
		case err != nil:
			m.Log.Error("sweep a deposit address", "chain", chains.CAIP2(m.Info.ID), "address", c.Address, "token", c.TokenID, "err", err)
			errs = append(errs, err.Error())
		case ok:
			started++
			busy[c.Address] = true
		case why != "" && forced:
			skipped = append(skipped, why)
		}
	}
	res.SweepsStarted += started
	if !forced {
		return nil
	}
	// A request is done once a pass finds nothing to start and nothing in flight.
	open, err := m.Store.Read(ctx).OpenSweeps(m.Info.ID)
	if err != nil || started > 0 || len(open) > 0 || len(errs) > 0 {
		return err
	}
	result := "done"
	if len(skipped) > 0 {
		result = "done; left: " + strings.Join(skipped, "; ")
	}
	return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.FinishSweepRequests(ids, result, m.Now()) })
}

// advanceSweeps moves the sweeps in flight by their transactions' states.
func (m *Manager) advanceSweeps(ctx context.Context, res *RoundResult) error {
	open, err := m.Store.Read(ctx).OpenSweeps(m.Info.ID)
	if err != nil || len(open) == 0 {
		return err
	}
	var txIDs []uuid.UUID
	for _, s := range open {
		for _, id := range []*uuid.UUID{s.TopupTxID, s.SweepTxID} {
			if id != nil {
				txIDs = append(txIDs, *id)
			}
		}
	}
	statuses, err := m.Store.Read(ctx).OutgoingStatuses(txIDs)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range open {
		err := m.advanceSweep(ctx, s, statuses, res)
		if errors.Is(err, store.ErrConflict) {
			continue // another process moved it first; whatever this one signed was rolled back
		}
		if err != nil {
			m.Log.Error("advance a sweep", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", s.TokenID, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) advanceSweep(ctx context.Context, s store.Sweep, statuses map[uuid.UUID]store.OutgoingStatus, res *RoundResult) error {
	now := m.Now()
	fail := func(msg string) error {
		m.Log.Error("sweep failed; its transfers wait for the next sweep", "chain", chains.CAIP2(m.Info.ID), "address", s.Address,
			"token", s.TokenID, "reason", msg)
		return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetSweep(s.ID, s.Status, store.SweepFailed, nil, nil, &msg, now) })
	}
	switch {
	case s.Status == store.SweepToppingUp && s.TopupTxID != nil:
		switch statuses[*s.TopupTxID] {
		case store.OutgoingConfirmed:
			return m.signTokenSweep(ctx, s)
		case store.OutgoingFailed:
			return fail("the gas top-up failed on chain or was given up")
		case store.OutgoingConflict:
			return fail("the gas top-up's nonce was taken by another transaction (an operator looks at the hot wallet)")
		}
	case s.Status == store.SweepSigned && s.SweepTxID != nil:
		switch statuses[*s.SweepTxID] {
		case store.OutgoingConfirmed:
			if err := m.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SetSweep(s.ID, store.SweepSigned, store.SweepConfirmed, nil, nil, nil, now)
			}); err != nil {
				return err
			}
			res.SweepsConfirmed++
			m.Log.Info("deposit address swept", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", s.TokenID,
				"amount", s.AmountAsset)
		case store.OutgoingFailed:
			return fail("the sweep transaction failed on chain or was given up")
		case store.OutgoingConflict:
			return fail("the sweep's nonce was used by another transaction from the deposit address")
		}
	}
	return nil // in flight: wait
}

// safeBlock is the newest block at the chain's confirmation depth: balances are read there, so
// a sweep moves only confirmed funds and covers exactly the transfers in them.
func (m *Manager) safeBlock(ctx context.Context) (int64, error) {
	head, err := m.Chain.BlockNumber(ctx)
	if err != nil {
		return 0, err
	}
	return max(m.Info.FinalUpTo(domain.Head{Number: int64(head)}), 0), nil
}

// startSweep sweeps one address's token balance, or tops up its gas first. It says why it did
// nothing when it did not.
func (m *Manager) startSweep(ctx context.Context, c store.SweepCandidate, forced bool) (bool, string, error) {
	tok, ok := m.Catalog.Tokens[c.TokenID]
	if !ok || c.KeyIndex < 0 || c.KeyIndex >= 1<<31 {
		return false, "", fmt.Errorf("sweep %s at %s: unknown token or key index", c.TokenID, c.Address)
	}
	if !forced {
		price, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
		if err != nil {
			return false, "", err
		}
		if money.ValueUSD(c.Amount, tok.Decimals, price).LessThan(m.Config.SweepMinUSD) {
			return false, "", nil // below the threshold: no node asked
		}
	}
	safe, err := m.safeBlock(ctx)
	if err != nil {
		return false, "", err
	}
	addr, hot := common.HexToAddress(c.Address), m.Wallet.Address()
	tip, feeCap, err := m.fees(ctx)
	if err != nil {
		return false, "", err
	}
	sw := store.Sweep{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Address: strings.ToLower(c.Address), KeyIndex: c.KeyIndex,
		TokenID: tok.ID, CreatedAt: m.Now()}
	if tok.AssetType == domain.Native {
		bal, err := m.Chain.BalanceAt(ctx, addr, big.NewInt(safe))
		if err != nil {
			return false, "", err
		}
		if bal.Sign() == 0 {
			return true, "", m.emptySweep(ctx, sw, safe)
		}
		gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: addr, To: &hot, Value: bal})
		if err != nil {
			return false, "", fmt.Errorf("estimate a native sweep's gas: %w", err)
		}
		cost := new(big.Int).Mul(feeCap, new(big.Int).SetUint64(gas))
		amount := new(big.Int).Sub(bal, cost)
		if amount.Sign() <= 0 {
			return false, fmt.Sprintf("%s holds %s wei, less than the gas to move it (%s)", sw.Address, bal, cost), nil
		}
		o := m.sweepTx(sw, tok, decimal.NewFromBigInt(amount, 0), int64(gas))
		return true, "", m.signSweep(ctx, sw, o, tip, feeCap, safe)
	}
	bal, err := chain.ERC20BalanceAt(ctx, m.Chain, common.HexToAddress(tok.ContractAddress), addr, big.NewInt(safe))
	if err != nil {
		return false, "", err
	}
	if bal.Sign() == 0 {
		return true, "", m.emptySweep(ctx, sw, safe)
	}
	gasLimit, err := m.tokenSweepGas(ctx, tok, addr, bal)
	if err != nil {
		return false, "", err
	}
	eth, err := m.Chain.BalanceAt(ctx, addr, nil)
	if err != nil {
		return false, "", err
	}
	need := new(big.Int).Mul(feeCap, big.NewInt(gasLimit))
	if eth.Cmp(need) >= 0 {
		o := m.sweepTx(sw, tok, decimal.NewFromBigInt(bal, 0), gasLimit)
		return true, "", m.signSweep(ctx, sw, o, tip, feeCap, safe)
	}
	// Gas first: what the sweep needs at today's fee cap (twice the base fee plus the tip), no
	// more — what it does not burn stays at the address.
	topup := new(big.Int).Sub(need, eth)
	native, ok := m.Catalog.NativeToken(m.Info.ID)
	if !ok {
		return false, "", fmt.Errorf("no native token for %s", chains.CAIP2(m.Info.ID))
	}
	gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: hot, To: &addr, Value: topup})
	if err != nil {
		return false, "", fmt.Errorf("estimate a gas top-up's gas: %w", err)
	}
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: strings.ToLower(hot.Hex()), Kind: store.TxGasTopup,
		TokenID: native.ID, Recipient: sw.Address, AmountAsset: decimal.NewFromBigInt(topup, 0), TxTo: sw.Address,
		TxValue: decimal.NewFromBigInt(topup, 0), GasLimit: int64(gas), CreatedAt: m.Now()}
	if short, err := m.gasShort(ctx, o, feeCap); err != nil || short != "" {
		return false, short, err
	}
	sw.Status, sw.TopupTxID = store.SweepToppingUp, &o.ID
	a, err := m.signNew(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := tx.InsertSweep(sw, safe)
		return err
	})
	if err != nil {
		return false, "", err
	}
	m.Log.Info("gas top-up signed for a token sweep", "chain", chains.CAIP2(m.Info.ID), "address", sw.Address, "token", tok.Symbol,
		"wei", topup.String(), "tx", a.Hash)
	return true, "", m.broadcast(ctx, o, a)
}

// signTokenSweep signs the ERC-20 transfer of a topped-up address's balance to the hot wallet,
// at the fee cap its gas affords.
func (m *Manager) signTokenSweep(ctx context.Context, s store.Sweep) error {
	tok := m.Catalog.Tokens[s.TokenID]
	addr := common.HexToAddress(s.Address)
	safe, err := m.safeBlock(ctx)
	if err != nil {
		return err
	}
	bal, err := chain.ERC20BalanceAt(ctx, m.Chain, common.HexToAddress(tok.ContractAddress), addr, big.NewInt(safe))
	if err != nil {
		return err
	}
	now := m.Now()
	if bal.Sign() == 0 {
		zero := decimal.Zero
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetSweep(s.ID, store.SweepToppingUp, store.SweepEmpty, &zero, nil, nil, now)
		})
	}
	gasLimit, err := m.tokenSweepGas(ctx, tok, addr, bal)
	if err != nil {
		return err
	}
	tip, feeCap, err := m.fees(ctx)
	if err != nil {
		return err
	}
	eth, err := m.Chain.BalanceAt(ctx, addr, nil)
	if err != nil {
		return err
	}
	// The cap is what the address's gas affords, up to today's; it must still clear the base fee.
	base := new(big.Int).Div(new(big.Int).Sub(feeCap, tip), big.NewInt(2))
	if afford := new(big.Int).Div(eth, big.NewInt(gasLimit)); afford.Cmp(feeCap) < 0 {
		feeCap = afford
	}
	if feeCap.Cmp(base) <= 0 {
		msg := fmt.Sprintf("fees rose past the gas top-up (%s wei at the address; base fee %s)", eth, base)
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetSweep(s.ID, store.SweepToppingUp, store.SweepFailed, nil, nil, &msg, now)
		})
	}
	if tip.Cmp(feeCap) > 0 {
		tip = new(big.Int).Set(feeCap)
	}
	o := m.sweepTx(s, tok, decimal.NewFromBigInt(bal, 0), gasLimit)
	a, err := m.signNew(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		return tx.SetSweep(s.ID, store.SweepToppingUp, store.SweepSigned, &o.AmountAsset, &o.ID, nil, now)
	})
	if err != nil {
		return err
	}
	m.Log.Info("token sweep signed", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", tok.Symbol,
		"amount", o.AmountAsset.String(), "tx", a.Hash)
	return m.broadcast(ctx, o, a)
}

// sweepTx is the logical transaction moving amount of tok from a deposit address to the hot
// wallet.
func (m *Manager) sweepTx(s store.Sweep, tok domain.Token, amount decimal.Decimal, gasLimit int64) store.OutgoingTx {
	hot := strings.ToLower(m.Wallet.Address().Hex())
	idx := s.KeyIndex
	o := store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: m.Info.ID, Sender: s.Address, KeyIndex: &idx, Kind: store.TxSweep,
		TokenID: tok.ID, Recipient: hot, AmountAsset: amount, GasLimit: gasLimit, CreatedAt: m.Now()}
	if tok.AssetType == domain.Native {
		o.TxTo, o.TxValue = hot, amount
		return o
	}
	o.TxTo, o.TxValue = strings.ToLower(tok.ContractAddress), decimal.Zero
	o.TxData = hex.EncodeToString(chain.ERC20TransferCalldata(m.Wallet.Address(), amount.BigInt()))
	return o
}

// signSweep signs a sweep transaction, stores it with the sweep covering the address's
// transfers up to head, and broadcasts it.
func (m *Manager) signSweep(ctx context.Context, sw store.Sweep, o store.OutgoingTx, tip, feeCap *big.Int, head int64) error {
	sw.Status, sw.SweepTxID, sw.AmountAsset = store.SweepSigned, &o.ID, &o.AmountAsset
	a, err := m.signNew(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := tx.InsertSweep(sw, head)
		return err
	})
	if err != nil {
		return err
	}
	m.Log.Info("sweep signed", "chain", chains.CAIP2(m.Info.ID), "address", sw.Address, "token", sw.TokenID,
		"amount", o.AmountAsset.String(), "tx", a.Hash)
	return m.broadcast(ctx, o, a)
}

// emptySweep records that an address holds none of a token its transfers brought (moved by
// other means): the transfers are covered, nothing is sent.
func (m *Manager) emptySweep(ctx context.Context, sw store.Sweep, head int64) error {
	zero := decimal.Zero
	sw.Status, sw.AmountAsset = store.SweepEmpty, &zero
	m.Log.Warn("deposit address holds nothing of a token it received: recorded as swept by other means", "chain",
		chains.CAIP2(m.Info.ID), "address", sw.Address, "token", sw.TokenID)
	return m.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertSweep(sw, head)
		return err
	})
}

// tokenSweepGas estimates the ERC-20 transfer of amount from a deposit address to the hot
// wallet, with a margin.
func (m *Manager) tokenSweepGas(ctx context.Context, tok domain.Token, from common.Address, amount *big.Int) (int64, error) {
	to := common.HexToAddress(tok.ContractAddress)
	gas, err := m.Chain.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &to,
		Data: chain.ERC20TransferCalldata(m.Wallet.Address(), amount)})
	if err != nil {
		return 0, fmt.Errorf("estimate a %s sweep's gas: %w", tok.Symbol, err)
	}
	return int64(gas * 5 / 4), nil
}

// signerOf is the key that signs for a logical transaction's sender: the hot wallet, or the
// deposit address's own key for a sweep.
func (m *Manager) signerOf(o store.OutgoingTx) (*hotwallet.Wallet, error) {
	if strings.EqualFold(o.Sender, m.Wallet.Address().Hex()) {
		return m.Wallet, nil
	}
	if o.KeyIndex == nil || m.Deposits == nil {
		return nil, fmt.Errorf("no key for sender %s on %s (a sweep needs PAYMENTS_DEPOSIT_XPRV or PAYMENTS_DEPOSIT_MNEMONIC_FILE)",
			o.Sender, chains.CAIP2(m.Info.ID))
	}
	k, err := m.Deposits.Key(uint32(*o.KeyIndex))
	if err != nil {
		return nil, err
	}
	w := hotwallet.FromKey(k)
	if !strings.EqualFold(w.Address().Hex(), o.Sender) {
		return nil, fmt.Errorf("the deposit key's index %d is not %s: the deposit key does not match the addresses", *o.KeyIndex, o.Sender)
	}
	return w, nil
}

// refuseSweepRequests answers operators' requests on a chain this process cannot sweep.
func (m *Manager) refuseSweepRequests(ctx context.Context, why string) error {
	reqs, err := m.Store.Read(ctx).OpenSweepRequests(m.Info.ID)
	if err != nil || len(reqs) == 0 {
		return err
	}
	ids := make([]uuid.UUID, len(reqs))
	for i, r := range reqs {
		ids[i] = r.ID
	}
	return m.Store.InTx(ctx, func(tx *store.Tx) error { return tx.FinishSweepRequests(ids, why, m.Now()) })
}
