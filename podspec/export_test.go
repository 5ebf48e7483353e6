package podspec

// The builders and resolvers of this package's tests, for the external
// tests that also need sources/ (which imports podspec).
var (
	EnvFieldForTest      = envField
	EnvResFieldForTest   = envResField
	EnvPodForTest        = envPod
	TestResourcesForTest = testResources
	ContainerEnvForTest  = containerEnv
	EnvNodeForTest       = envNode
	EnvStringForTest     = envString
)
