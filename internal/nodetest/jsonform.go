package nodetest

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
)

// JSONValue converts a message value decoded by rosmsg (maps, slices, numbers)
// to the JSON form the cross-check scripts print — 64-bit integers as
// decimal strings, bytes as numbers, non-finite floats as "NaN", "Infinity"
// or "-Infinity" — and round-trips it through encoding/json, so that it
// compares with a script's decoded output by reflect.DeepEqual.
func JSONValue(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(jsonForm(v))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonForm is JSONValue's conversion, before the round trip.
func jsonForm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonForm(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonForm(e)
		}
		return out
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		return jsonForm(float64(x))
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return x
	case []uint8:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = float64(e)
		}
		return out
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = jsonForm(rv.Index(i).Interface())
		}
		return out
	}
	return v
}
