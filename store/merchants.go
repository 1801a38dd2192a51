package store

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"

	"github.com/paymentsd/paymentsd/domain"
)

// CreateMerchant inserts a merchant.
func (t *Tx) CreateMerchant(m domain.Merchant) error {
	return translate(t.db.Create(&merchantRow{ID: m.ID, Name: m.Name, ShortName: m.ShortName, LogoURL: m.LogoURL,
		GaslessFeePaidBy: string(m.GaslessFeePaidBy.Or()), DepositsEnabled: m.DepositsEnabled, WithdrawalsEnabled: m.WithdrawalsEnabled, CreatedAt: m.CreatedAt}).Error)
}

// GetMerchant reads a merchant.
func (t *Tx) GetMerchant(id uuid.UUID) (domain.Merchant, error) {
	var r merchantRow
	if err := t.db.Take(&r, "id = ?", id).Error; err != nil {
		return domain.Merchant{}, translate(err)
	}
	return r.domain(), nil
}

// LockMerchant reads a merchant holding a row lock until the transaction ends (PostgreSQL);
// on SQLite the single connection already serialises transactions. Balance checks run under it.
// (See forUpdate for why the lock is FOR NO KEY UPDATE.)
func (t *Tx) LockMerchant(id uuid.UUID) (domain.Merchant, error) {
	q := t.forUpdate()
	var r merchantRow
	if err := q.Take(&r, "id = ?", id).Error; err != nil {
		return domain.Merchant{}, translate(err)
	}
	return r.domain(), nil
}

// LockBalance holds the balance lock of a merchant's mode until the transaction ends
// (PostgreSQL; SQLite's single writer already serialises): every change that must see the
// balance it is about to spend (a withdrawal's creation) takes it first. One lock per merchant
// and mode: test traffic never waits on live traffic, and a test credit is never in the sum a
// live payout is checked against. A merchant made before its rows existed gets them here.
func (t *Tx) LockBalance(merchantID uuid.UUID, mode domain.Mode) error {
	row := balanceLockRow{MerchantID: merchantID, Livemode: mode.Live()}
	var got []balanceLockRow
	if err := t.forUpdate().Where("merchant_id = ? AND livemode = ?", merchantID, mode.Live()).Find(&got).Error; err != nil {
		return translate(err)
	}
	if len(got) == 1 {
		return nil
	}
	if err := t.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return translate(err)
	}
	return translate(t.forUpdate().Where("merchant_id = ? AND livemode = ?", merchantID, mode.Live()).Take(&row).Error)
}

// CreateBalanceLocks makes a new merchant's balance lock rows (both modes).
func (t *Tx) CreateBalanceLocks(merchantID uuid.UUID) error {
	return translate(t.db.Create(&[]balanceLockRow{{MerchantID: merchantID, Livemode: true}, {MerchantID: merchantID}}).Error)
}

// CountMerchants reports how many merchants exist (the demo bootstrap runs only on an empty database).
func (t *Tx) CountMerchants() (int64, error) {
	var n int64
	return n, translate(t.db.Model(&merchantRow{}).Count(&n).Error)
}

// CreateAPIKey stores a key's hash and display prefix.
func (t *Tx) CreateAPIKey(k domain.APIKey) error {
	return translate(t.db.Create(&apiKeyRow{ID: k.ID, MerchantID: k.MerchantID, Prefix: k.Prefix, KeyHash: k.Hash,
		Livemode: k.Mode.Live(), CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy}).Error)
}

// MerchantByKeyHash finds the merchant owning an unrevoked key, acting in the key's mode.
func (t *Tx) MerchantByKeyHash(hash []byte) (domain.Merchant, error) {
	// One query on the authentication path: the merchant's columns and its key's mode.
	var r struct {
		ID                 uuid.UUID
		Name               string
		ShortName          string
		LogoURL            *string
		DisplayName        *string
		AccentColor        *string
		GaslessFeePaidBy   string
		DepositsEnabled    bool
		WithdrawalsEnabled bool
		CreatedAt          time.Time
		KeyLivemode        bool
		KeyID              uuid.UUID
		KeyPrefix          string
		KeyCreatedBy       *uuid.UUID
	}
	res := t.db.Table("merchants").Select("merchants.id, merchants.name, merchants.short_name, merchants.logo_url, merchants.display_name, merchants.accent_color, "+
		"merchants.gasless_fee_paid_by, merchants.deposits_enabled, merchants.withdrawals_enabled, merchants.created_at, api_keys.livemode AS key_livemode, "+
		"api_keys.id AS key_id, api_keys.prefix AS key_prefix, api_keys.created_by AS key_created_by").
		Joins("JOIN api_keys ON api_keys.merchant_id = merchants.id").
		Where("api_keys.key_hash = ? AND api_keys.revoked_at IS NULL", hash).Limit(1).Scan(&r)
	if res.Error != nil {
		return domain.Merchant{}, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return domain.Merchant{}, ErrNotFound
	}
	m := merchantRow{ID: r.ID, Name: r.Name, ShortName: r.ShortName, LogoURL: r.LogoURL, DisplayName: r.DisplayName, AccentColor: r.AccentColor,
		GaslessFeePaidBy: r.GaslessFeePaidBy, DepositsEnabled: r.DepositsEnabled, WithdrawalsEnabled: r.WithdrawalsEnabled, CreatedAt: r.CreatedAt}.domain()
	m.Mode = domain.ModeOf(r.KeyLivemode)
	m.KeyID, m.KeyPrefix, m.KeyCreatedBy = r.KeyID, r.KeyPrefix, r.KeyCreatedBy
	return m, nil
}

// ActiveKeysByPrefix lists the active keys with the display prefix (without their hashes).
func (t *Tx) ActiveKeysByPrefix(prefix string) ([]domain.APIKey, error) {
	var rows []apiKeyRow
	if err := t.db.Omit("key_hash").Where("prefix = ? AND revoked_at IS NULL", prefix).Order("id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]domain.APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// RevokeKeysByPrefix revokes every active key with the display prefix; ErrNotFound when none.
func (t *Tx) RevokeKeysByPrefix(prefix string, at time.Time) (int64, error) {
	res := t.db.Model(&apiKeyRow{}).Where("prefix = ? AND revoked_at IS NULL", prefix).Update("revoked_at", at)
	if res.Error != nil {
		return 0, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return 0, fmt.Errorf("%w: no active key with prefix %q", ErrNotFound, prefix)
	}
	return res.RowsAffected, nil
}

// APIKeys lists a merchant's keys, newest first (hashes left out).
func (t *Tx) APIKeys(merchantID uuid.UUID, modes ...domain.Mode) ([]domain.APIKey, error) {
	var rows []apiKeyRow
	if err := t.db.Omit("key_hash").Where("merchant_id = ? AND livemode IN ?", merchantID, liveFlags(modes)).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]domain.APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, t.keyMakers(out)
}

// keyMakers fills in the email of the person who made each key (one query for the list).
func (t *Tx) keyMakers(keys []domain.APIKey) error {
	var ids []uuid.UUID
	for _, k := range keys {
		if k.CreatedBy != nil {
			ids = append(ids, *k.CreatedBy)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var users []userRow
	if err := t.db.Select("id", "email").Where("id IN ?", ids).Find(&users).Error; err != nil {
		return translate(err)
	}
	email := make(map[uuid.UUID]string, len(users))
	for _, u := range users {
		email[u.ID] = u.Email
	}
	for i, k := range keys {
		if e, ok := email[derefID(k.CreatedBy)]; ok {
			keys[i].CreatedByEmail = &e
		}
	}
	return nil
}

func derefID(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

// RevokeAPIKey revokes one of a merchant's keys (a revoked key stays as it was) and reads it
// back; ErrNotFound when the merchant has no such key.
func (t *Tx) RevokeAPIKey(merchantID uuid.UUID, modes []domain.Mode, keyID uuid.UUID, at time.Time) (k domain.APIKey, revoked bool, err error) {
	res := t.db.Model(&apiKeyRow{}).Where("id = ? AND merchant_id = ? AND livemode IN ? AND revoked_at IS NULL", keyID, merchantID, liveFlags(modes)).
		Update("revoked_at", at)
	if res.Error != nil {
		return domain.APIKey{}, false, translate(res.Error)
	}
	var r apiKeyRow
	if err := t.db.Omit("key_hash").Take(&r, "id = ? AND merchant_id = ? AND livemode IN ?", keyID, merchantID, liveFlags(modes)).Error; err != nil {
		return domain.APIKey{}, false, translate(err)
	}
	keys := []domain.APIKey{r.domain()}
	if err := t.keyMakers(keys); err != nil {
		return domain.APIKey{}, false, err
	}
	return keys[0], res.RowsAffected > 0, nil
}

// PutWithdrawalConfig replaces a merchant's withdrawal configuration.
func (t *Tx) PutWithdrawalConfig(c domain.WithdrawalConfig) error {
	row := withdrawalConfigRow{MerchantID: c.MerchantID, TokenSymbol: c.TokenSymbol, MinAmountCents: c.MinAmountCents,
		MaxAmountCents: c.MaxAmountCents, BackendWalletAddress: c.BackendWalletAddress, UpdatedAt: c.UpdatedAt}
	if err := t.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error; err != nil {
		return translate(err)
	}
	if err := t.db.Where("merchant_id = ?", c.MerchantID).Delete(&withdrawalConfigChainRow{}).Error; err != nil {
		return translate(err)
	}
	for _, id := range c.ChainIDs {
		if err := t.db.Create(&withdrawalConfigChainRow{MerchantID: c.MerchantID, ChainID: id}).Error; err != nil {
			return translate(err)
		}
	}
	return nil
}

// GetWithdrawalConfig reads a merchant's withdrawal configuration.
func (t *Tx) GetWithdrawalConfig(merchantID uuid.UUID) (domain.WithdrawalConfig, error) {
	var row withdrawalConfigRow
	if err := t.db.Take(&row, "merchant_id = ?", merchantID).Error; err != nil {
		return domain.WithdrawalConfig{}, translate(err)
	}
	var chains []withdrawalConfigChainRow
	if err := t.db.Where("merchant_id = ?", merchantID).Order("chain_id").Find(&chains).Error; err != nil {
		return domain.WithdrawalConfig{}, translate(err)
	}
	c := domain.WithdrawalConfig{MerchantID: row.MerchantID, TokenSymbol: row.TokenSymbol, MinAmountCents: row.MinAmountCents,
		MaxAmountCents: row.MaxAmountCents, BackendWalletAddress: row.BackendWalletAddress, UpdatedAt: row.UpdatedAt}
	for _, ch := range chains {
		c.ChainIDs = append(c.ChainIDs, ch.ChainID)
	}
	return c, nil
}

// Setting reads a deployment setting; ErrNotFound when unset.
func (t *Tx) Setting(name string) (string, error) {
	var r settingRow
	if err := t.db.Take(&r, "name = ?", name).Error; err != nil {
		return "", translate(err)
	}
	return r.Value, nil
}

// PutSetting stores a setting, replacing its value.
func (t *Tx) PutSetting(name, value string) error {
	return translate(t.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}},
		DoUpdates: clause.AssignmentColumns([]string{"value"})}).Create(&settingRow{Name: name, Value: value}).Error)
}

// InsertSetting stores a setting once; ErrConflict if another process stored it first.
func (t *Tx) InsertSetting(name, value string) error {
	return translate(t.db.Create(&settingRow{Name: name, Value: value}).Error)
}

// SetWithdrawalsEnabled turns a merchant's withdrawals on or off.
func (t *Tx) SetWithdrawalsEnabled(merchantID uuid.UUID, on bool) error {
	res := t.db.Model(&merchantRow{}).Where("id = ?", merchantID).Update("withdrawals_enabled", on)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// PendingPayout is what a merchant's unpaid withdrawals of one token add up to.
type PendingPayout struct {
	ChainID     int64
	TokenID     string
	AmountCents int64
}

// PendingPayouts sums a merchant's withdrawals of one mode debited and not yet paid (pending or
// processing) per chain and token.
func (t *Tx) PendingPayouts(merchantID uuid.UUID, mode domain.Mode) ([]PendingPayout, error) {
	var rows []PendingPayout
	err := t.db.Model(&withdrawalRow{}).Select("chain_id, token_id, SUM(amount_in_cents) AS amount_cents").
		Where("merchant_id = ? AND livemode = ? AND status IN ?", merchantID, mode.Live(), []domain.WithdrawalStatus{domain.WithdrawalPending, domain.WithdrawalProcessing}).
		Group("chain_id, token_id").Order("chain_id, token_id").Scan(&rows).Error
	return rows, translate(err)
}

// liveFlags is the livemode column's values of modes.
func liveFlags(modes []domain.Mode) []bool {
	out := make([]bool, len(modes))
	for i, m := range modes {
		out[i] = m.Live()
	}
	return out
}

// MerchantProfile is the branding the dashboard changes; a nil field is left as it is, and
// ClearLogo / ClearAccent set theirs to NULL. GaslessFeePaidBy ("": unchanged) is who bears the
// relay gas of payments made without gas.
type MerchantProfile struct {
	DisplayName, LogoURL, AccentColor *string
	ClearLogo, ClearAccent            bool
	GaslessFeePaidBy                  domain.GaslessFeePayer
}

// UpdateMerchantProfile changes a merchant's branding; ErrNotFound when there is no such merchant.
func (t *Tx) UpdateMerchantProfile(id uuid.UUID, p MerchantProfile) error {
	set := map[string]any{}
	if p.DisplayName != nil {
		set["display_name"] = *p.DisplayName
	}
	switch {
	case p.ClearLogo:
		set["logo_url"] = nil
	case p.LogoURL != nil:
		set["logo_url"] = *p.LogoURL
	}
	switch {
	case p.ClearAccent:
		set["accent_color"] = nil
	case p.AccentColor != nil:
		set["accent_color"] = *p.AccentColor
	}
	if p.GaslessFeePaidBy != "" {
		set["gasless_fee_paid_by"] = string(p.GaslessFeePaidBy)
	}
	if len(set) == 0 {
		_, err := t.GetMerchant(id)
		return err
	}
	res := t.db.Model(&merchantRow{}).Where("id = ?", id).Updates(set)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}
