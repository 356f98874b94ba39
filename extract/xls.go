package extract

import "fmt"

func readXLS(p *parser, _ *cfb) {
	p.fail("parse", fmt.Errorf("%w: Excel binary workbook", ErrUnsupported))
}
