package merchants

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

func TestCreateRefusesALogoURLThatIsNotHTTPS(t *testing.T) {
	s := &Service{Now: time.Now} // no store: the input is refused before any is needed
	for _, bad := range []string{"http://acme.example/logo.png", "https:///logo.png", "https:logo.png", "//acme.example/logo.png", ""} {
		_, err := s.Create(context.Background(), CreateInput{Name: "Acme", LogoURL: &bad})
		var in *domain.InvalidInputError
		require.True(t, errors.As(err, &in), "%q: %v", bad, err)
		assert.Equal(t, "logoUrl", in.Param)
		assert.Equal(t, domain.CodeParameterInvalid, in.Code)
	}
	assert.NoError(t, CheckLogoURL("https://acme.example/logo.png"))
}
