//go:build unix

package folder

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/download/folder/foldertest"
)

func TestWritableTellsAFolderQuakCannotWrite(t *testing.T) {
	f := prepared(t)
	assert.True(t, f.Writable())
	foldertest.ReadOnly(t, f.Dir)
	assert.False(t, f.Writable())
}
