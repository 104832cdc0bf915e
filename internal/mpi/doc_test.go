package mpi

import "testing"

// TestLaunched reads the process count from each launcher's environment.
func TestLaunched(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{}, 0},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "3"}, 3},
		{map[string]string{"PMI_SIZE": "4"}, 4},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS": "8"}, 8},
		{map[string]string{"SLURM_NTASKS": "8"}, 0}, // sbatch's script, no srun step
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "x"}, 0},
	} {
		for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"} {
			t.Setenv(k, c.env[k])
		}
		if got := Launched(); got != c.want {
			t.Errorf("%v: Launched() = %d, want %d", c.env, got, c.want)
		}
	}
}
