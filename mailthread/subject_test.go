package mailthread

import "testing"

func TestSubject(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Budget", "Budget"},
		{"Re: Budget", "Budget"},
		{"RE: re: Fwd: Budget", "Budget"},
		{"[USRP-users] Re: RX Channel out of range", "RX Channel out of range"},
		{"Re: [USRP-users] Re: Fwd: RX  Channel", "RX Channel"},
		{"AW: WG: Angebot", "Angebot"},
		{"SV: VS: Tarjous", "Tarjous"},
		{"Re[2]: Budget", "Budget"},
		{"Re(3): Budget", "Budget"},
		{"RE : Budget", "Budget"},
		{"回复：预算", "预算"},
		{"TR: RE: Budget", "Budget"},
		{"[PATCH v2 1/3] net: fix", "[PATCH v2 1/3] net: fix"},
		{"Reply needed: Budget", "Reply needed: Budget"},
		{"Review: Budget", "Review: Budget"},
		{"Re:", ""},
		{"[]", "[]"},
		{"   ", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Subject(tc.in); got != tc.want {
				t.Errorf("Subject(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
