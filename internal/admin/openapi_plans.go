package admin

import (
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// planOps document the plan routes (CONTRACT §18); they join ops, so the
// test that every route is documented covers them.
func (d *docSchemas) planOps() []apiOp {
	planSchema, grantSchema := schemaOf[store.Plan](), schemaOf[store.PlanGrant]()
	return []apiOp{
		{route: "GET /api/plans", summary: "Every plan, highest priority first", answer: listOf(planSchema)},
		{route: "POST /api/plans", summary: "Define a plan: price, period, rolling windows (minutes, hours or days, each with a quota), models and groups covered, priority",
			body: body(planSchema, planFields, nil, "name", "windows"), answer: planSchema},
		{route: "GET /api/plans/{id}", summary: "One plan", answer: planSchema},
		{route: "PATCH /api/plans/{id}", summary: "Change a plan (members sent replace the stored ones)",
			body: body(planSchema, planFields, nil), answer: planSchema},
		{route: "DELETE /api/plans/{id}", summary: "Delete a plan and every grant of it", answer: ref("Deleted")},
		{route: "GET /api/users/{id}/plans", summary: "The plans a user holds, with every window's use",
			answer: schemaOf[heldPlans]()},
		{route: "POST /api/users/{id}/plans", summary: "Grant a user a plan until a time (default: one period from now)",
			body:   body(nil, grantFields, schema{"plan_id": integer, "until": schema{"type": "string", "format": "date-time"}}, "plan_id"),
			answer: grantSchema},
		{route: "DELETE /api/users/{id}/plans/{grant}", summary: "Revoke a user's grant of a plan", answer: ref("Deleted")},
		{route: "GET /api/user/plans", summary: "One's own plans: until, and every window's used, quota and resets_at; and plan_overflow",
			answer: schemaOf[heldPlans]()},
		{route: "PATCH /api/auth/me", summary: "Change one's own settings: plan_overflow (balance or wait)",
			body:   body(nil, []string{"plan_overflow"}, schema{"plan_overflow": schema{"type": "string", "enum": []string{plans.OverflowBalance, plans.OverflowWait}}}),
			answer: ref("User")},
		{route: "POST /api/user/subscribe", summary: "Subscribe to a plan by card: a Stripe Checkout Session in subscription mode",
			body:   body(nil, []string{"plan_id"}, schema{"plan_id": integer}, "plan_id"),
			answer: object(schema{"id": str, "session": str, "checkout_url": str})},
	}
}
