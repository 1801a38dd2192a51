package server

import (
	"context"

	"github.com/paymentsd/paymentsd/gen"
)

// The passkey and OIDC sign-in operations of fuzzStub (issue 22).

func (s fuzzStub) ListPasskeys(context.Context, gen.ListPasskeysRequestObject) (gen.ListPasskeysResponseObject, error) {
	s.call.reached = true
	return gen.ListPasskeys200JSONResponse{}, nil
}

func (s fuzzStub) BeginPasskeyRegistration(context.Context, gen.BeginPasskeyRegistrationRequestObject) (gen.BeginPasskeyRegistrationResponseObject, error) {
	s.call.reached = true
	return gen.BeginPasskeyRegistration200JSONResponse{}, nil
}

func (s fuzzStub) FinishPasskeyRegistration(context.Context, gen.FinishPasskeyRegistrationRequestObject) (gen.FinishPasskeyRegistrationResponseObject, error) {
	s.call.reached = true
	return gen.FinishPasskeyRegistration201JSONResponse{}, nil
}

func (s fuzzStub) DeletePasskey(context.Context, gen.DeletePasskeyRequestObject) (gen.DeletePasskeyResponseObject, error) {
	s.call.reached = true
	return gen.DeletePasskey204Response{}, nil
}

func (s fuzzStub) BeginPasskeyLogin(context.Context, gen.BeginPasskeyLoginRequestObject) (gen.BeginPasskeyLoginResponseObject, error) {
	s.call.reached = true
	return gen.BeginPasskeyLogin200JSONResponse{}, nil
}

func (s fuzzStub) FinishPasskeyLogin(context.Context, gen.FinishPasskeyLoginRequestObject) (gen.FinishPasskeyLoginResponseObject, error) {
	s.call.reached = true
	return gen.FinishPasskeyLogin200JSONResponse{}, nil
}

func (s fuzzStub) GetAuthProviders(context.Context, gen.GetAuthProvidersRequestObject) (gen.GetAuthProvidersResponseObject, error) {
	s.call.reached = true
	return gen.GetAuthProviders200JSONResponse{}, nil
}

func (s fuzzStub) StartOidcLogin(context.Context, gen.StartOidcLoginRequestObject) (gen.StartOidcLoginResponseObject, error) {
	s.call.reached = true
	return gen.StartOidcLogin302Response{}, nil
}

func (s fuzzStub) OidcCallback(context.Context, gen.OidcCallbackRequestObject) (gen.OidcCallbackResponseObject, error) {
	s.call.reached = true
	return gen.OidcCallback302Response{}, nil
}

func (s fuzzStub) BeginPasskeyStepUp(context.Context, gen.BeginPasskeyStepUpRequestObject) (gen.BeginPasskeyStepUpResponseObject, error) {
	s.call.reached = true
	return gen.BeginPasskeyStepUp200JSONResponse{}, nil
}

func (s fuzzStub) FinishPasskeyStepUp(context.Context, gen.FinishPasskeyStepUpRequestObject) (gen.FinishPasskeyStepUpResponseObject, error) {
	s.call.reached = true
	return gen.FinishPasskeyStepUp200JSONResponse{}, nil
}
