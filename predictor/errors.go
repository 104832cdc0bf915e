package predictor

import "fmt"

func errBatchTooLarge(rows, maxRows int) error {
	return fmt.Errorf("%w: batch of %d exceeds the roller's capacity %d", ErrLayout, rows, maxRows)
}
