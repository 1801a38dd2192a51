package store

import (
	"github.com/pressly/goose/v3"

	"github.com/paymentsd/paymentsd/catalog"
)

// seedMigration is version 2, once the catalogue's seed. The catalogue is now the embedded file
// (catalog/chains.yaml) upserted after every migration (Store.Migrate), so the version stays in
// goose's history as a no-op: databases that ran it keep their rows, which the upsert brings in
// line; new databases get theirs from the upsert.
func seedMigration() *goose.Migration {
	return goose.NewGoMigration(2, &goose.GoFunc{Mode: goose.TransactionEnabled}, &goose.GoFunc{Mode: goose.TransactionEnabled})
}

// NativeTokenID is the CAIP-19 id of a chain's native token (catalog.NativeTokenID).
func NativeTokenID(chainID int64) string { return catalog.NativeTokenID(chainID) }

// ERC20TokenID is the CAIP-19 id of an ERC-20 token (catalog.ERC20TokenID).
func ERC20TokenID(chainID int64, contract string) string {
	return catalog.ERC20TokenID(chainID, contract)
}
