package store

import (
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
)

type acceptedAssetRow struct {
	MerchantID uuid.UUID `gorm:"primaryKey"`
	TokenID    string    `gorm:"primaryKey"`
}

func (acceptedAssetRow) TableName() string { return "merchant_accepted_assets" }

// AcceptedAssets reads a merchant's accepted assets; no rows is the default selection. It does
// not check that the merchant exists.
func (t *Tx) AcceptedAssets(merchantID uuid.UUID) (domain.AcceptedAssets, error) {
	var ids []string
	if err := t.db.Model(&acceptedAssetRow{}).Where("merchant_id = ?", merchantID).Order("token_id").
		Pluck("token_id", &ids).Error; err != nil {
		return domain.AcceptedAssets{}, translate(err)
	}
	return domain.SelectAssets(ids...), nil
}

// PutAcceptedAssets replaces a merchant's accepted assets; the default deletes every row. Run
// it inside InTx so the replacement is atomic.
func (t *Tx) PutAcceptedAssets(merchantID uuid.UUID, a domain.AcceptedAssets) error {
	if err := t.db.Where("merchant_id = ?", merchantID).Delete(&acceptedAssetRow{}).Error; err != nil {
		return translate(err)
	}
	ids := a.TokenIDs()
	if len(ids) == 0 {
		return nil
	}
	rows := make([]acceptedAssetRow, len(ids))
	for i, id := range ids {
		rows[i] = acceptedAssetRow{MerchantID: merchantID, TokenID: id}
	}
	return translate(t.db.Create(&rows).Error)
}
