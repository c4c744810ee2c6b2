package admin

import (
	"context"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/users"
)

// generatedPasswordLen is long enough to resist guessing over the network
// and short enough to type once from the start-up log.
const generatedPasswordLen = 24

// EnsureRoot creates the user root on first start. With an empty password a
// random one is made and returned as generated, to be printed once. An
// existing root user is left as it is, so a password changed in the
// console survives restarts.
func EnsureRoot(ctx context.Context, d Deps, password string) (created bool, generated string, err error) {
	_, err = d.Store.Users().GetByUsername(ctx, store.RoleRoot)
	if err == nil {
		return false, "", nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return false, "", err
	}
	if password == "" {
		generated = auth.NewKey()[3 : 3+generatedPasswordLen]
		password = generated
	}
	_, err = d.usersService().Create(ctx, users.Account{Username: store.RoleRoot, Password: password, Role: store.RoleRoot, Seeded: true})
	if err != nil {
		// Another node may have created it between the lookup and now.
		if errors.Is(err, store.ErrConflict) {
			return false, "", nil
		}
		return false, "", err
	}
	return true, generated, nil
}
