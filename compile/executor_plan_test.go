package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/slurm"
)

func TestPlanExecutorPicksTheSlurmMode(t *testing.T) {
	p := &Project{Path: "/p/rocmk.toml", Executor: "slurm", Slurm: slurm.Options{Mode: "array", Partition: "gpu"}}
	var req Request
	require.NoError(t, planExecutor(p, PlanOptions{}, &req))
	assert.Equal(t, "slurm", req.Executor)
	assert.Equal(t, "array", req.Slurm.Mode, "the project's mode")
	assert.Equal(t, "gpu", req.Slurm.Partition)

	require.NoError(t, planExecutor(p, PlanOptions{SlurmMode: "job"}, &req))
	assert.Equal(t, "job", req.Slurm.Mode, "--slurm-mode wins over rocmk.toml")

	err := planExecutor(nil, PlanOptions{Executor: "slurm", SlurmMode: "batch"}, &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--slurm-mode "batch": want steps, job, array`)

	p.Slurm.Mode = "salloc"
	err = planExecutor(p, PlanOptions{}, &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `/p/rocmk.toml: [slurm] mode "salloc"`)
}
