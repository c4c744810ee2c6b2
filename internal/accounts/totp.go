package accounts

import (
	"bytes"
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// totpOpts are the parameters every authenticator app understands:
// RFC 6238 with SHA-1, six digits, 30-second steps, and one step of clock
// drift either way.
var totpOpts = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// RecoveryCodeCount is how many recovery codes enabling two-factor sign-in
// hands out.
const RecoveryCodeCount = 10

// TOTPSetup is what starting two-factor setup shows, once.
type TOTPSetup struct {
	Secret     string `json:"secret"`
	OTPAuthURL string `json:"otpauth_url"`
	// QRCode is the otpauth URL as a PNG data URL, for the console.
	QRCode string `json:"qr_code"`
}

// TOTPStatus says whether a user has two-factor sign-in on.
type TOTPStatus struct {
	Enabled bool `json:"enabled"`
	// RecoveryLeft counts the unused recovery codes.
	RecoveryLeft int `json:"recovery_codes_left"`
}

type totpRow struct {
	secret   string
	enabled  bool
	lastStep int64
}

func (s *Store) totpRow(ctx context.Context, userID int64) (*totpRow, error) {
	var sealed string
	var enabled int
	var row totpRow
	err := s.db.QueryRowContext(ctx, s.q("SELECT secret, enabled, last_step FROM user_totp WHERE user_id = ?"), userID).
		Scan(&sealed, &enabled, &row.lastStep)
	if err != nil {
		return nil, notFound(err)
	}
	plain, err := s.seal.open(sealed)
	if err != nil {
		return nil, err
	}
	row.secret, row.enabled = string(plain), enabled == 1
	return &row, nil
}

// TOTPEnabled reports whether userID must give a second factor.
func (s *Store) TOTPEnabled(ctx context.Context, userID int64) (bool, error) {
	var enabled int
	err := s.db.QueryRowContext(ctx, s.q("SELECT enabled FROM user_totp WHERE user_id = ?"), userID).Scan(&enabled)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return enabled == 1, err
}

// TOTPStatus reports the user's two-factor state.
func (s *Store) TOTPStatus(ctx context.Context, userID int64) (TOTPStatus, error) {
	var st TOTPStatus
	on, err := s.TOTPEnabled(ctx, userID)
	if err != nil || !on {
		return st, err
	}
	st.Enabled = true
	err = s.db.QueryRowContext(ctx, s.q("SELECT COUNT(*) FROM user_recovery_codes WHERE user_id = ? AND used_unix IS NULL"), userID).Scan(&st.RecoveryLeft)
	return st, err
}

// BeginTOTP makes a new secret for userID and keeps it, sealed, until
// EnableTOTP confirms it. A user who already has two-factor sign-in on
// gets store.ErrConflict: the secret in use is never replaced silently.
func (s *Store) BeginTOTP(ctx context.Context, userID int64, account string) (*TOTPSetup, error) {
	if on, err := s.TOTPEnabled(ctx, userID); err != nil {
		return nil, err
	} else if on {
		return nil, store.ErrConflict
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Turnpike", AccountName: account, Period: 30,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, SecretSize: 20})
	if err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM user_totp WHERE user_id = ? AND enabled = 0"), userID); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO user_totp (user_id, secret, enabled, last_step, updated_unix) VALUES (?, ?, 0, 0, ?)"),
		userID, s.seal.seal([]byte(key.Secret())), s.now().Unix()); err != nil {
		return nil, fmt.Errorf("begin two-factor setup: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	setup := &TOTPSetup{Secret: key.Secret(), OTPAuthURL: key.URL()}
	if img, err := key.Image(240, 240); err == nil {
		var buf bytes.Buffer
		if png.Encode(&buf, img) == nil {
			setup.QRCode = "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
		}
	}
	return setup, nil
}

// matchStep returns the time step whose code this is, within the allowed
// drift, or -1. Codes are compared in constant time.
func matchStep(secret, code string, now time.Time) int64 {
	if len(code) != 6 {
		return -1
	}
	for skew := -int64(totpOpts.Skew); skew <= int64(totpOpts.Skew); skew++ {
		t := now.Add(time.Duration(skew*int64(totpOpts.Period)) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / int64(totpOpts.Period)
		}
	}
	return -1
}

// EnableTOTP confirms the pending secret with a code from the app and
// returns the recovery codes, the only time they are shown. A wrong code,
// or no pending secret, is false.
func (s *Store) EnableTOTP(ctx context.Context, userID int64, code string) ([]string, bool, error) {
	row, err := s.totpRow(ctx, userID)
	if err == store.ErrNotFound {
		return nil, false, nil
	}
	if err != nil || row.enabled {
		return nil, false, err
	}
	step := matchStep(row.secret, strings.TrimSpace(code), s.now())
	if step < 0 {
		return nil, false, nil
	}
	codes := make([]string, RecoveryCodeCount)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	// The confirming code does not spend its step: the first sign-in
	// with two factors usually follows within the same 30 seconds.
	res, err := tx.ExecContext(ctx, s.q("UPDATE user_totp SET enabled = 1, updated_unix = ? WHERE user_id = ? AND enabled = 0"),
		s.now().Unix(), userID)
	if n, err := rowsAffected(res, err); err != nil || n != 1 {
		return nil, false, err
	}
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM user_recovery_codes WHERE user_id = ?"), userID); err != nil {
		return nil, false, err
	}
	for i := range codes {
		codes[i] = newRecoveryCode()
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (?, ?)"),
			userID, hashSecret(normalizeRecovery(codes[i]))); err != nil {
			return nil, false, err
		}
	}
	return codes, true, tx.Commit()
}

// VerifyTOTP checks a second factor of a user who has two-factor sign-in
// on: a current six-digit code or an unused recovery code, which is then
// spent. With signIn, a six-digit code signs in at most once (RFC 6238
// §5.2: a code seen by a shoulder-surfer cannot be replayed within its 30
// seconds); turning the factor off, which already needs a session, does
// not spend the step, so the code that just signed in can confirm it.
func (s *Store) VerifyTOTP(ctx context.Context, userID int64, code string, signIn bool) (bool, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return false, nil
	}
	row, err := s.totpRow(ctx, userID)
	if err == store.ErrNotFound {
		return false, nil
	}
	if err != nil || !row.enabled {
		return false, err
	}
	if isDigits(code) {
		step := matchStep(row.secret, code, s.now())
		if step < 0 {
			return false, nil
		}
		if !signIn {
			return true, nil
		}
		res, err := s.db.ExecContext(ctx, s.q("UPDATE user_totp SET last_step = ? WHERE user_id = ? AND last_step < ?"), step, userID, step)
		n, err := rowsAffected(res, err)
		return n == 1, err
	}
	res, err := s.db.ExecContext(ctx, s.q("UPDATE user_recovery_codes SET used_unix = ? WHERE user_id = ? AND code_hash = ? AND used_unix IS NULL"),
		s.now().Unix(), userID, hashSecret(normalizeRecovery(code)))
	n, err := rowsAffected(res, err)
	return n >= 1, err
}

// DisableTOTP removes the user's second factor and recovery codes.
func (s *Store) DisableTOTP(ctx context.Context, userID int64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM user_totp WHERE user_id = ?"), userID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM user_recovery_codes WHERE user_id = ?"), userID); err != nil {
		return err
	}
	return tx.Commit()
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

var codeEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newRecoveryCode is 80 random bits as four groups of four characters.
func newRecoveryCode() string {
	c := codeEncoding.EncodeToString(randomBytes(10))
	return c[0:4] + "-" + c[4:8] + "-" + c[8:12] + "-" + c[12:16]
}

// normalizeRecovery makes a typed recovery code comparable: case and
// separators do not matter.
func normalizeRecovery(code string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(code) {
		if r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeAt is the code of secret at t (for tests and the demo).
func codeAt(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}
