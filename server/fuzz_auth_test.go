package server

import (
	"context"

	"github.com/paymentsd/paymentsd/gen"
)

// The sign-in operations of fuzzStub (issue 22).

func (s fuzzStub) Login(context.Context, gen.LoginRequestObject) (gen.LoginResponseObject, error) {
	s.call.reached = true
	return gen.Login200JSONResponse{}, nil
}

func (s fuzzStub) LoginSecondFactor(context.Context, gen.LoginSecondFactorRequestObject) (gen.LoginSecondFactorResponseObject, error) {
	s.call.reached = true
	return gen.LoginSecondFactor200JSONResponse{}, nil
}

func (s fuzzStub) RefreshSession(context.Context, gen.RefreshSessionRequestObject) (gen.RefreshSessionResponseObject, error) {
	s.call.reached = true
	return gen.RefreshSession200JSONResponse{}, nil
}

func (s fuzzStub) Logout(context.Context, gen.LogoutRequestObject) (gen.LogoutResponseObject, error) {
	s.call.reached = true
	return gen.Logout204Response{}, nil
}

func (s fuzzStub) LogoutAll(context.Context, gen.LogoutAllRequestObject) (gen.LogoutAllResponseObject, error) {
	s.call.reached = true
	return gen.LogoutAll204Response{}, nil
}

func (s fuzzStub) GetMe(context.Context, gen.GetMeRequestObject) (gen.GetMeResponseObject, error) {
	s.call.reached = true
	return gen.GetMe200JSONResponse{}, nil
}

func (s fuzzStub) ChangePassword(context.Context, gen.ChangePasswordRequestObject) (gen.ChangePasswordResponseObject, error) {
	s.call.reached = true
	return gen.ChangePassword204Response{}, nil
}

func (s fuzzStub) EnrollTotp(context.Context, gen.EnrollTotpRequestObject) (gen.EnrollTotpResponseObject, error) {
	s.call.reached = true
	return gen.EnrollTotp200JSONResponse{}, nil
}

func (s fuzzStub) ConfirmTotp(context.Context, gen.ConfirmTotpRequestObject) (gen.ConfirmTotpResponseObject, error) {
	s.call.reached = true
	return gen.ConfirmTotp200JSONResponse{}, nil
}

func (s fuzzStub) DisableTotp(context.Context, gen.DisableTotpRequestObject) (gen.DisableTotpResponseObject, error) {
	s.call.reached = true
	return gen.DisableTotp204Response{}, nil
}

func (s fuzzStub) StepUp(context.Context, gen.StepUpRequestObject) (gen.StepUpResponseObject, error) {
	s.call.reached = true
	return gen.StepUp200JSONResponse{}, nil
}

func (s fuzzStub) ListSessions(context.Context, gen.ListSessionsRequestObject) (gen.ListSessionsResponseObject, error) {
	s.call.reached = true
	return gen.ListSessions200JSONResponse{}, nil
}

func (s fuzzStub) RevokeSession(context.Context, gen.RevokeSessionRequestObject) (gen.RevokeSessionResponseObject, error) {
	s.call.reached = true
	return gen.RevokeSession204Response{}, nil
}

func (s fuzzStub) AcceptInvitation(context.Context, gen.AcceptInvitationRequestObject) (gen.AcceptInvitationResponseObject, error) {
	s.call.reached = true
	return gen.AcceptInvitation200JSONResponse{}, nil
}

func (s fuzzStub) GetMerchantSecurity(context.Context, gen.GetMerchantSecurityRequestObject) (gen.GetMerchantSecurityResponseObject, error) {
	s.call.reached = true
	return gen.GetMerchantSecurity200JSONResponse{}, nil
}

func (s fuzzStub) SetMerchantSecurity(context.Context, gen.SetMerchantSecurityRequestObject) (gen.SetMerchantSecurityResponseObject, error) {
	s.call.reached = true
	return gen.SetMerchantSecurity200JSONResponse{}, nil
}
