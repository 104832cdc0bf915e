package plot

import "image/color"

// Role is what a curve or bar shows. It fixes the colour: a role has the
// same colour in every figure calisym draws (the Okabe–Ito colours, which
// colour-blind readers can tell apart).
type Role int

// The roles of calisym's figures.
const (
	// Other is a series none of the named roles fits (a third baseline, a
	// variant): such series take the extra colours, in order of appearance
	// in the figure, none of which a named role uses.
	Other Role = iota
	// Truth is the measured or simulated state (black).
	Truth
	// GR is a CaLiSym GR-SympNet model (bluish green).
	GR
	// GRB is a CaLiSym GRB-SympNet model (blue).
	GRB
	// MLP is the MLP baseline (vermillion).
	MLP
	// Hold is the reference that holds the state constant, x̂ₖ = x₀ (grey).
	Hold
	// Physics is an identified physics model predicting alone (brown, a
	// colour outside the Okabe–Ito set that the extra colours use).
	Physics
)

// KindRole returns the role of a model kind as the project names kinds:
// "gr", "grb", "mlp", "hold" (the state held constant), "physics" (a
// physics model alone) and "truth"; any other kind is Other.
func KindRole(kind string) Role {
	switch kind {
	case "truth":
		return Truth
	case "gr":
		return GR
	case "grb":
		return GRB
	case "mlp":
		return MLP
	case "hold":
		return Hold
	case "physics":
		return Physics
	}
	return Other
}

// Colour returns the role's colour; Other's first extra colour for Other.
func (r Role) Colour() color.Color { return r.colour(0) }

// colour returns the role's colour, or for Other the extra colour of the
// figure's i-th Other series (cycling).
func (r Role) colour(i int) color.Color {
	switch r {
	case Truth:
		return color.RGBA{0x00, 0x00, 0x00, 0xff}
	case GR:
		return color.RGBA{0x00, 0x9e, 0x73, 0xff}
	case GRB:
		return color.RGBA{0x00, 0x72, 0xb2, 0xff}
	case MLP:
		return color.RGBA{0xd5, 0x5e, 0x00, 0xff}
	case Hold:
		return color.RGBA{0x99, 0x99, 0x99, 0xff}
	case Physics:
		return color.RGBA{0x8c, 0x51, 0x0a, 0xff}
	}
	extra := [...]color.RGBA{
		{0xe6, 0x9f, 0x00, 0xff}, // orange
		{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
		{0x56, 0xb4, 0xe9, 0xff}, // sky blue
		{0xf0, 0xe4, 0x42, 0xff}, // yellow
	}
	return extra[((i%len(extra))+len(extra))%len(extra)]
}

// colourer hands out the colours of one figure's series: a named role's
// own colour, and the extra colours in turn for Other series (one per
// distinct name, so a model's train and validation curves share one).
type colourer struct {
	others map[string]int
}

func (c *colourer) of(r Role, name string) color.Color {
	if r != Other {
		return r.colour(0)
	}
	if c.others == nil {
		c.others = map[string]int{}
	}
	i, ok := c.others[name]
	if !ok {
		i = len(c.others)
		c.others[name] = i
	}
	return r.colour(i)
}
