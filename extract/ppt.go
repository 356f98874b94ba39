package extract

import "fmt"

func readPPT(p *parser, _ *cfb) {
	p.fail("parse", fmt.Errorf("%w: PowerPoint binary presentation", ErrUnsupported))
}
