package payouts

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

// A batch's outcome is read per sweep from its receipt: the token's own Transfer logs say which
// pulls moved what, whatever the batch contract reports (a token is the authority on its
// balances). Each sweep the batch carries is confirmed or failed in the database transaction that
// records the batch's outcome, so a crash never leaves one moved without the other.

// transferTopic is keccak256("Transfer(address,address,uint256)").
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// isBatch tells a batch (the hot wallet's transaction carrying many sweeps) from a deposit
// address's own sweep transaction and from a payout.
func isBatch(o store.OutgoingTx) bool { return o.Kind == store.TxSweep && o.KeyIndex == nil }

// Pulled sums, per sender, the Transfer logs of token to `to` among logs (a batch's receipt).
func Pulled(logs []*types.Log, token, to common.Address) map[common.Address]*big.Int {
	out := map[common.Address]*big.Int{}
	for _, l := range logs {
		if l.Address != token || len(l.Topics) != 3 || l.Topics[0] != transferTopic || len(l.Data) != 32 || l.Removed {
			continue
		}
		if common.BytesToAddress(l.Topics[2][:]) != to {
			continue
		}
		from := common.BytesToAddress(l.Topics[1][:])
		if out[from] == nil {
			out[from] = new(big.Int)
		}
		out[from].Add(out[from], new(big.Int).SetBytes(l.Data))
	}
	return out
}

// PullFailures reads the batch contract's PullFailed logs: per deposit address, why its pull
// failed (the token's revert reason when it gave one).
func PullFailures(logs []*types.Log, batch common.Address) map[common.Address]string {
	ev := batchABI.Events["PullFailed"]
	out := map[common.Address]string{}
	for _, l := range logs {
		if l.Address != batch || len(l.Topics) != 3 || l.Topics[0] != ev.ID {
			continue
		}
		why := "the pull reverted without a reason"
		if v, err := ev.Inputs.NonIndexed().Unpack(l.Data); err == nil && len(v) == 1 {
			if reason, _ := v[0].([]byte); len(reason) > 0 {
				if s, err := abi.UnpackRevert(reason); err == nil {
					why = s
				} else {
					why = fmt.Sprintf("reverted with %x", reason)
				}
			}
		}
		out[common.BytesToAddress(l.Topics[2][:])] = why
	}
	return out
}

// settleBatch confirms each sweep a batch carried whose pull the token's logs show, in full, and
// fails the others (their transfers wait for the next sweep), with the batch's outcome.
func (m *Manager) settleBatch(ctx context.Context, o store.OutgoingTx, f txmgr.Final, record txmgr.Record, res *RoundResult) error {
	sweeps, err := m.Store.Read(ctx).OpenSweepsOfTx(o.ID)
	if err != nil {
		return err
	}
	tok, ok := m.Catalog.Tokens[o.TokenID]
	if !ok {
		return fmt.Errorf("sweep batch %s: token %s is not in the catalogue", o.ID, o.TokenID)
	}
	pulled, why := map[common.Address]*big.Int{}, map[common.Address]string{}
	if f.Succeeded {
		pulled = Pulled(f.Receipt.Logs, common.HexToAddress(tok.ContractAddress), m.Wallet.Address())
		why = PullFailures(f.Receipt.Logs, common.HexToAddress(o.TxTo))
	}
	now := m.Now()
	var confirmed int
	var failed []string
	err = record(func(tx *store.Tx) error {
		confirmed, failed = 0, nil
		for _, s := range sweeps {
			addr := common.HexToAddress(s.Address)
			if got := pulled[addr]; got != nil && s.AmountAsset != nil && got.Cmp(s.AmountAsset.BigInt()) == 0 {
				if err := tx.SetSweep(s.ID, store.SweepSigned, store.SweepConfirmed, nil, nil, nil, now); err != nil {
					return err
				}
				confirmed++
				continue
			}
			msg := batchFailure(f, pulled[addr], why[addr])
			if err := tx.SetSweep(s.ID, store.SweepSigned, store.SweepFailed, nil, nil, &msg, now); err != nil {
				return err
			}
			failed = append(failed, s.Address+": "+msg)
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.SweepsConfirmed += confirmed
	m.Log.Info("sweep batch final", "chain", chains.CAIP2(m.Info.ID), "token", tok.Symbol, "tx", f.Hash, "gas", f.Receipt.GasUsed,
		"swept", confirmed, "failed", len(failed))
	if len(failed) > 0 {
		m.Log.Error("pulls of a sweep batch failed; their transfers wait for the next sweep", "chain", chains.CAIP2(m.Info.ID),
			"tx", f.Hash, "failed", strings.Join(failed, "; "))
	}
	return nil
}

// batchFailure says why one sweep of a final batch did not go through.
func batchFailure(f txmgr.Final, got *big.Int, why string) string {
	switch {
	case !f.Succeeded:
		return fmt.Sprintf("the sweep batch %s reverted on chain", f.Hash)
	case got != nil:
		return fmt.Sprintf("the sweep batch %s moved %s, not the amount signed", f.Hash, got)
	case why != "":
		return fmt.Sprintf("the pull failed in sweep batch %s: %s", f.Hash, why)
	}
	return fmt.Sprintf("the sweep batch %s shows no transfer from this address", f.Hash)
}

// abandonBatch fails the sweeps of a batch signed for a chain that restarted from a new genesis.
func (m *Manager) abandonBatch(ctx context.Context, o store.OutgoingTx, reason string, record txmgr.Record) error {
	sweeps, err := m.Store.Read(ctx).OpenSweepsOfTx(o.ID)
	if err != nil {
		return err
	}
	now := m.Now()
	return record(func(tx *store.Tx) error {
		for _, s := range sweeps {
			if err := tx.SetSweep(s.ID, store.SweepSigned, store.SweepFailed, nil, nil, &reason, now); err != nil {
				return err
			}
		}
		return nil
	})
}
