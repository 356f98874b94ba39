package api_test

import (
	"net/http"
	"testing"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/policy"
)

// TestCreateHoldIsIdempotent: a create repeated with the same body (a
// client retrying after a lost answer) answers the hold it made, 200, not
// 409 (issue 47); another body for the matter is 409; placing holds can
// be listed.
func TestCreateHoldIsIdempotent(t *testing.T) {
	r := newRoleRig(t)
	seed := int64(r.doc(t, "contract.txt").ID)
	body := map[string]any{"matter": "C", "name": "Matter C", "reason": "litigation", "mode": "report", "seeds": []int64{seed}}
	var first, again api.HoldResponse
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", body, &first); code != http.StatusCreated || !first.Placement.Created {
		t.Fatalf("create: %d %s", code, out)
	}
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", body, &again); code != http.StatusOK || again.Placement.Created {
		t.Fatalf("the same create again: %d %s; want 200 with the hold", code, out)
	}
	if again.Hold.Matter != "C" || again.Hold.Status != policy.HoldActive || !again.Hold.Created.Equal(first.Hold.Created) || again.Hold.Held != first.Hold.Held {
		t.Fatalf("the same create again answered %+v; want the hold first made, %+v", again.Hold, first.Hold)
	}
	body["reason"] = "another reason"
	if code, out := r.call(t, "admin", "POST", "/api/v1/holds", body, nil); code != http.StatusConflict {
		t.Fatalf("another body for the matter: %d %s; want 409", code, out)
	}
	var placing struct{ Holds []policy.Hold }
	if code, out := r.call(t, "admin", "GET", "/api/v1/holds?status=placing", nil, &placing); code != http.StatusOK || len(placing.Holds) != 0 {
		t.Fatalf("placing holds: %d %s; want none", code, out)
	}
}
