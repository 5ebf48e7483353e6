package volumes_test

import (
	"github.com/podline/podline/stages"
	"github.com/podline/podline/volumes"
)

// The volume stage takes a Source as its ContentSource.
var _ stages.ContentSource = (*volumes.Source)(nil)
