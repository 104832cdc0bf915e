package rosmsg

// Struct is a decoded message: the value of each field of Def, in the order
// of Def.Fields.
//
// Field values have these Go types:
//
//	bool                         bool
//	int8, uint8 (byte, char)     int8, uint8 (ROS 1 byte is int8)
//	int16 … uint64               int16 … uint64
//	float32, float64             float32, float64
//	string                       string
//	nested message               *Struct
//	ROS 1 time, duration         *Struct with fields sec and nsec
//	T[], T[N], T[<=N]            []T of the types above ([]*Struct for messages)
type Struct struct {
	// Def is the definition of the message type.
	Def *MsgDef
	// Fields holds one value per field of Def.
	Fields []any
}

// Field returns the value of the field called name.
func (s *Struct) Field(name string) (any, bool) {
	i := s.Def.FieldIndex(name)
	if i < 0 || i >= len(s.Fields) {
		return nil, false
	}
	return s.Fields[i], true
}

// Map returns the message as a map from field name to value, with nested
// messages as maps and arrays of messages as []map[string]any; primitive
// values and arrays are returned as they are. It suits encoding/json and
// debugging output.
func (s *Struct) Map() map[string]any {
	m := make(map[string]any, len(s.Fields))
	for i, v := range s.Fields {
		if i >= len(s.Def.Fields) {
			break
		}
		switch v := v.(type) {
		case *Struct:
			m[s.Def.Fields[i].Name] = v.Map()
		case []*Struct:
			a := make([]map[string]any, len(v))
			for j, e := range v {
				a[j] = e.Map()
			}
			m[s.Def.Fields[i].Name] = a
		default:
			m[s.Def.Fields[i].Name] = v
		}
	}
	return m
}
