package admission

import (
	"context"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/auth"
)

var authPrincipal = auth.Principal{UserID: 4, TokenID: 5, Group: "default"}

func TestWithoutTrafficControlEveryCallIsAdmittedAndTheTicketEndsQuietly(t *testing.T) {
	var tk Ticket
	asked := false
	h := http.Header{}
	err := Gate{}.Limit(context.Background(), &tk, &authPrincipal, "m", h, func() int64 { asked = true; return 1 })
	if err != nil || asked || len(h) != 0 || tk.Limits != nil || tk.Lease != nil {
		t.Fatalf("limit without traffic control: err %v, sized %v, headers %v, ticket %+v", err, asked, h, tk)
	}
	tk.Release(context.Background()) // nil lease and budget: nothing to give back
}
