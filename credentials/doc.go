// Package credentials turns a pod's image pull secrets into the registry
// credentials to pull one image with, in the order to try them, as the
// kubelet's keyring does (dockerconfigjson and dockercfg secrets, keys
// matched by host glob, port and path prefix, the most specific key
// first, Docker Hub's legacy key as the last resort), and parses image
// references the way the registry clients do.
//
// It is pure: no API server, no runtime, no clock. Reading the secrets
// and pulling are the callers' business.
package credentials
