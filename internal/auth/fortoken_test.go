package auth

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestForTokenChecksTheKeyAsAuthenticateDoes(t *testing.T) {
	past := time.Now().Add(-time.Hour)
	tests := []struct {
		name       string
		token      func(*store.Token)
		user       string
		remove     bool
		wantStatus int
	}{
		{"an enabled key is its principal", nil, store.StatusEnabled, false, 0},
		{"a disabled key is refused", func(t *store.Token) { t.Status = store.StatusDisabled }, store.StatusEnabled, false, 403},
		{"an expired key is refused", func(t *store.Token) { t.ExpiresAt = &past }, store.StatusEnabled, false, 403},
		{"a disabled user's key is refused", nil, store.StatusDisabled, false, 403},
		{"a deleted key is unknown", nil, store.StatusEnabled, true, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			k, st := keysOverSQLite(t)
			u := &store.User{Username: "u", PasswordHash: "h", Role: store.RoleUser, Group: "vip", Status: tc.user}
			if err := st.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			tok := &store.Token{UserID: u.ID, Name: "k", KeyHash: HashKey("sk-x"), KeyMasked: "sk-…", Quota: -1,
				Models: []string{"m"}, Status: store.StatusEnabled}
			if tc.token != nil {
				tc.token(tok)
			}
			if err := st.Tokens().Create(ctx, tok); err != nil {
				t.Fatal(err)
			}
			if tc.remove {
				if err := st.Tokens().Delete(ctx, tok.ID); err != nil {
					t.Fatal(err)
				}
			}
			p, err := k.ForToken(ctx, tok.ID)
			if tc.wantStatus != 0 {
				if err == nil || ir.As(err).Status != tc.wantStatus {
					t.Fatalf("err = %v, want status %d", err, tc.wantStatus)
				}
				return
			}
			if err != nil || p.UserID != u.ID || p.TokenID != tok.ID || p.Group != "vip" || !p.Allows("m") || p.Allows("n") {
				t.Fatalf("principal = %+v, %v", p, err)
			}
		})
	}
}
