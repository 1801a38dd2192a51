package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoles(t *testing.T) {
	for _, s := range []string{"viewer", "developer", "admin", "owner"} {
		r, err := ParseRole(s)
		assert.NoError(t, err)
		assert.Equal(t, Role(s), r)
	}
	for _, s := range []string{"", "Owner", "root", "admin "} {
		_, err := ParseRole(s)
		assert.Error(t, err, "%q", s)
	}
	assert.True(t, RoleOwner.Includes(RoleAdmin))
	assert.True(t, RoleAdmin.Includes(RoleAdmin))
	assert.True(t, RoleDeveloper.Includes(RoleViewer))
	assert.False(t, RoleViewer.Includes(RoleDeveloper))
	assert.False(t, RoleAdmin.Includes(RoleOwner))
	assert.False(t, Role("root").Includes(RoleViewer), "an unknown role includes nothing")
}
