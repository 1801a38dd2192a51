package payouts

import (
	"context"
	"encoding/hex"
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
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

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
	if worth, err := m.worthSweeping(ctx, c, tok, forced); err != nil || !worth {
		return false, "", err // below the threshold: no node asked
	}
	safe, err := m.safeBlock(ctx)
	if err != nil {
		return false, "", err
	}
	addr, hot := common.HexToAddress(c.Address), m.Wallet.Address()
	tip, feeCap, err := m.tx.Fees(ctx)
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
	need := txmgr.GasCost(feeCap, gasLimit)
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
	if short, err := m.tx.HotShort(ctx, o, feeCap); err != nil || short != "" {
		return false, short, err
	}
	sw.Status, sw.TopupTxID = store.SweepToppingUp, &o.ID
	a, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := tx.InsertSweep(sw, safe)
		return err
	})
	if err != nil {
		return false, "", err
	}
	m.Log.Info("gas top-up signed for a token sweep", "chain", chains.CAIP2(m.Info.ID), "address", sw.Address, "token", tok.Symbol,
		"wei", topup.String(), "tx", a.Hash)
	return true, "", m.tx.Broadcast(ctx, o, a)
}

// worthSweeping: an operator's request sweeps everything; otherwise a candidate's unswept
// transfers must be worth the threshold.
func (m *Manager) worthSweeping(ctx context.Context, c store.SweepCandidate, tok domain.Token, forced bool) (bool, error) {
	if forced {
		return true, nil
	}
	price, err := m.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
	if err != nil {
		return false, err
	}
	return !money.ValueUSD(c.Amount, tok.Decimals, price).LessThan(m.Config.SweepMinUSD), nil
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
	tip, feeCap, err := m.tx.Fees(ctx)
	if err != nil {
		return err
	}
	eth, err := m.Chain.BalanceAt(ctx, addr, nil)
	if err != nil {
		return err
	}
	// The cap is what the address's gas affords, up to today's; it must still clear the base fee.
	tip, feeCap, base, ok := txmgr.CapToBalance(tip, feeCap, eth, gasLimit)
	if !ok {
		msg := fmt.Sprintf("fees rose past the gas top-up (%s wei at the address; base fee %s)", eth, base)
		return m.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetSweep(s.ID, store.SweepToppingUp, store.SweepFailed, nil, nil, &msg, now)
		})
	}
	o := m.sweepTx(s, tok, decimal.NewFromBigInt(bal, 0), gasLimit)
	a, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		return tx.SetSweep(s.ID, store.SweepToppingUp, store.SweepSigned, &o.AmountAsset, &o.ID, nil, now)
	})
	if err != nil {
		return err
	}
	m.Log.Info("token sweep signed", "chain", chains.CAIP2(m.Info.ID), "address", s.Address, "token", tok.Symbol,
		"amount", o.AmountAsset.String(), "tx", a.Hash)
	return m.tx.Broadcast(ctx, o, a)
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
	a, err := m.tx.SignAndStore(ctx, &o, tip, feeCap, func(tx *store.Tx) error {
		_, err := tx.InsertSweep(sw, head)
		return err
	})
	if err != nil {
		return err
	}
	m.Log.Info("sweep signed", "chain", chains.CAIP2(m.Info.ID), "address", sw.Address, "token", sw.TokenID,
		"amount", o.AmountAsset.String(), "tx", a.Hash)
	return m.tx.Broadcast(ctx, o, a)
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
