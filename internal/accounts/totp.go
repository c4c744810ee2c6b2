package accounts

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
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
	secret  string
	enabled bool
}

func (s *Store) totpRow(ctx context.Context, userID int64) (*totpRow, error) {
	t, err := s.st.TOTP().Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	plain, err := s.seal.open(t.Secret)
	if err != nil {
		return nil, err
	}
	return &totpRow{secret: string(plain), enabled: t.Enabled}, nil
}

// TOTPEnabled reports whether userID must give a second factor.
func (s *Store) TOTPEnabled(ctx context.Context, userID int64) (bool, error) {
	t, err := s.st.TOTP().Get(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return t.Enabled, nil
}

// TOTPStatus reports the user's two-factor state.
func (s *Store) TOTPStatus(ctx context.Context, userID int64) (TOTPStatus, error) {
	var st TOTPStatus
	on, err := s.TOTPEnabled(ctx, userID)
	if err != nil || !on {
		return st, err
	}
	st.Enabled = true
	st.RecoveryLeft, err = s.st.TOTP().RecoveryLeft(ctx, userID)
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
	if err := s.st.TOTP().Begin(ctx, userID, s.seal.seal([]byte(key.Secret())), s.now()); err != nil {
		return nil, fmt.Errorf("begin two-factor setup: %w", err)
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
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil || row.enabled {
		return nil, false, err
	}
	step := matchStep(row.secret, strings.TrimSpace(code), s.now())
	if step < 0 {
		return nil, false, nil
	}
	// The confirming code does not spend its step: the first sign-in
	// with two factors usually follows within the same 30 seconds.
	codes := make([]string, RecoveryCodeCount)
	hashes := make([]string, RecoveryCodeCount)
	for i := range codes {
		codes[i] = newRecoveryCode()
		hashes[i] = hashSecret(normalizeRecovery(codes[i]))
	}
	ok, err := s.st.TOTP().Enable(ctx, userID, hashes, s.now())
	if err != nil || !ok {
		return nil, false, err
	}
	return codes, true, nil
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
	if errors.Is(err, store.ErrNotFound) {
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
		return s.st.TOTP().SpendStep(ctx, userID, step)
	}
	return s.st.TOTP().SpendRecovery(ctx, userID, hashSecret(normalizeRecovery(code)), s.now())
}

// DisableTOTP removes the user's second factor and recovery codes.
func (s *Store) DisableTOTP(ctx context.Context, userID int64) error {
	return s.st.TOTP().Delete(ctx, userID)
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
