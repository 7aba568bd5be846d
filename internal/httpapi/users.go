package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// UserOut is a dashboard user of the account.
type UserOut struct {
	Address   string    `json:"address" doc:"The user's Solana address (base58); it signs in with it." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Role      string    `json:"role" enum:"owner,approver,viewer" doc:"owner: everything, users and admin keys included; approver: approve, reject, freeze, read; viewer: read." example:"approver"`
	CreatedAt time.Time `json:"created_at" doc:"When it was added, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	LiveKeys  int       `json:"live_keys" doc:"Live API keys that descend from this user: made by them in the dashboard, or by a key they made (and so on). Removing the user revokes them." example:"2"`
	// m-of-n approvals: a Slack click counts as a person only through
	// this link.
	SlackUserID *string `json:"slack_user_id" nullable:"true" doc:"The user's Slack member id, or null: a click on an approval message's buttons by that member counts as this person (an approve needs it when the wallet needs several people, approvals_required above 1)." example:"U024BE7LH"`
}

func userOf(u *auth.User) UserOut {
	return UserOut{Address: u.Address, Role: string(u.Role), CreatedAt: u.CreatedAt.UTC(), LiveKeys: u.LiveKeys, SlackUserID: u.SlackUserID}
}

type userOutput struct{ Body UserOut }

type listUsersOutput struct {
	Body struct {
		Users []UserOut `json:"users" doc:"Owners first, then approvers and viewers, by address."`
	}
}

type createUserInput struct {
	Body struct {
		Address string `json:"address" minLength:"32" maxLength:"44" doc:"The user's Solana address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
		Role    string `json:"role" enum:"owner,approver,viewer" doc:"The user's role." example:"approver"`
	}
}

type userAddressInput struct {
	Address string `path:"address" maxLength:"64" doc:"The user's Solana address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
}

type updateUserInput struct {
	Address string `path:"address" maxLength:"64" doc:"The user's Solana address." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Body    struct {
		Role        string            `json:"role,omitempty" required:"false" enum:"owner,approver,viewer" doc:"The new role; omitted: unchanged. A user who is no longer owner or approver no longer counts for pending approvals: their approves on them are withdrawn." example:"viewer"`
		SlackUserID Removable[string] `json:"slack_user_id,omitzero" maxLength:"32" doc:"The user's Slack member id (U… or W…), or null to unlink it; omitted: unchanged. A click by that member on an approval message counts as this person; one member, one user (409 otherwise)." example:"U024BE7LH"`
	}
}

func (s *server) registerUsers(api huma.API) {
	const tag = "Users"
	huma.Register(api, huma.Operation{
		OperationID: "list-users", Method: http.MethodGet, Path: Prefix + "/users",
		Summary: "List dashboard users", Tags: []string{tag}, Errors: []int{401, 403},
		Description: "The account's dashboard users, every one (an account has at most 1,000, so the answer stays under about 130 KB): Solana addresses that sign in with their wallet, each with a role.",
	}, func(ctx context.Context, _ *struct{}) (*listUsersOutput, error) {
		us, err := auth.ListUsers(ctx, s.DB, principal(ctx).AccountID)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		out := &listUsersOutput{}
		out.Body.Users = make([]UserOut, len(us))
		for i := range us {
			out.Body.Users[i] = userOf(&us[i])
		}
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "create-user", Method: http.MethodPost, Path: Prefix + "/users",
		Summary: "Add a dashboard user", Tags: []string{tag}, DefaultStatus: http.StatusCreated, MaxBodyBytes: MaxBodyBytes + 1,
		Description: "Makes an address a user of the account with a role; it may then sign in. 409 when it already is one, or when the account has 1,000 users (the most it may).",
		Errors:      []int{400, 401, 403, 409, 413, 422},
	}, func(ctx context.Context, in *createUserInput) (*userOutput, error) {
		pr := principal(ctx)
		if err := auth.CheckOwnerChange(pr, "create-user", in.Body.Address, "", auth.Role(in.Body.Role)); err != nil {
			return nil, s.fail(ctx, err)
		}
		var u auth.User
		err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			u, err = AddUser(ctx, tx, pr.AccountID, in.Body.Address, auth.Role(in.Body.Role), pr.ActorID(), nil)
			return err
		})
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		return &userOutput{Body: userOf(&u)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "update-user", Method: http.MethodPatch, Path: Prefix + "/users/{address}",
		Summary: "Change a user's role or Slack member id", Tags: []string{tag}, MaxBodyBytes: MaxBodyBytes + 1,
		Description: "Changes the given fields: `role` (409 when it would leave the account without an owner) and `slack_user_id` (the Slack member whose clicks count as this person; " +
			"null unlinks it; 409 when another user has it; an owner's is changed only by an owner signed in to the dashboard, 403 for any key). A user made a viewer no longer counts for pending approvals: their approves on them are withdrawn.",
		Errors: []int{400, 401, 403, 404, 409, 413, 422},
	}, func(ctx context.Context, in *updateUserInput) (*userOutput, error) {
		pr := principal(ctx)
		var after auth.User
		err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var before, a auth.User
			var err error
			if in.Body.Role != "" || in.Body.SlackUserID.Set {
				// Checked on the role as locked until the change commits.
				from, err := auth.LockRole(ctx, tx, pr.AccountID, in.Address)
				if err != nil {
					return err
				}
				if in.Body.Role != "" {
					if err = auth.CheckOwnerChange(pr, "update-user", in.Address, from, auth.Role(in.Body.Role)); err != nil {
						return err
					}
				}
				if in.Body.SlackUserID.Set {
					if err = auth.CheckOwnerSlackLink(pr, "update-user", in.Address, from); err != nil {
						return err
					}
				}
			}
			if in.Body.Role != "" {
				if before, a, err = auth.SetRole(ctx, tx, pr.AccountID, in.Address, auth.Role(in.Body.Role)); err != nil {
					return err
				}
			}
			if in.Body.SlackUserID.Set {
				b, changed, err := auth.SetSlackMember(ctx, tx, pr.AccountID, in.Address, in.Body.SlackUserID.Value)
				if err != nil {
					return err
				}
				if in.Body.Role == "" {
					before = b
				}
				a = changed
			}
			if in.Body.Role == "" && !in.Body.SlackUserID.Set {
				if a, err = auth.GetUser(ctx, tx, pr.AccountID, in.Address); err != nil {
					return err
				}
				before = a
			}
			after = a
			details := map[string]any{"address": a.Address}
			if before.Role != a.Role {
				details["before"], details["after"] = before.Role, a.Role
			}
			if !equalStr(before.SlackUserID, a.SlackUserID) {
				details["slack_user_id_before"], details["slack_user_id"] = before.SlackUserID, a.SlackUserID
			}
			if len(details) == 1 {
				return nil
			}
			if a.Role == auth.RoleViewer && before.Role != auth.RoleViewer {
				n, err := approval.WithdrawPerson(ctx, tx, pr.AccountID, auth.UserActorID(a.Address))
				if err != nil {
					return err
				}
				details["approvals_withdrawn"] = n
			}
			// An owner no longer: the exports they asked for or approved,
			// not sealed yet, are void.
			if before.Role == auth.RoleOwner && a.Role != auth.RoleOwner {
				who := auth.UserActorID(a.Address)
				n, err := wallet.VoidExportsOf(ctx, tx, pr.AccountID, who, who+", who asked for or approved it, is no longer an owner")
				if err != nil {
					return err
				}
				details["exports_voided"] = n
			}
			now := time.Now()
			// A new owner is announced however they became one: promoted
			// as well as added (user.added, with promoted_from).
			if a.Role == auth.RoleOwner && before.Role != auth.RoleOwner {
				data := map[string]any{"address": a.Address, "role": a.Role, "added_by": pr.ActorID(), "promoted_from": before.Role}
				if _, err := webhook.Emit(ctx, tx, pr.AccountID, now, webhook.KindUserAdded, data); err != nil {
					return err
				}
			}
			return audit.Append(ctx, tx, audit.Entry{
				AccountID: pr.AccountID,
				At:        now,
				Actor:     audit.Actor(pr.ActorID()),
				Action:    audit.ActionUserChanged,
				Target:    string(audit.UserActor(a.Address)),
				Details:   details,
			})
		})
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		return &userOutput{Body: userOf(&after)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "delete-user", Method: http.MethodDelete, Path: Prefix + "/users/{address}",
		Summary: "Remove a dashboard user", Tags: []string{tag}, DefaultStatus: http.StatusNoContent,
		Description: "Its sessions in this account end at once, and the API keys that descend from it (made by it, or by a key it made, and so on; " +
			"`live_keys` in the user list counts them) are revoked in the same change, each with a `key.revoked` audit entry by the caller. " +
			"409 for the account's last owner.",
		Errors: []int{401, 403, 404, 409},
	}, func(ctx context.Context, in *userAddressInput) (*struct{}, error) {
		pr := principal(ctx)
		err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			// Checked on the role as locked until the removal commits.
			role, err := auth.LockRole(ctx, tx, pr.AccountID, in.Address)
			if err != nil {
				return err
			}
			if err := auth.CheckOwnerChange(pr, "delete-user", in.Address, role, ""); err != nil {
				return err
			}
			_, err = RemoveUser(ctx, tx, pr.AccountID, in.Address, pr.ActorID(), nil)
			return err
		})
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		return nil, nil
	})
}

// AddUser makes address a user of the account with role in tx, as actor
// (user:<address>, key_<id>, or system for the command line), and
// announces it: a user.added audit entry and a user.added event (the
// webhooks' and the dashboard's live stream), in the same transaction,
// whoever added them. via, when set, is added to both (the command line's
// name). The API and `api users add` share it; the caller applies the
// owners' rule (auth.CheckOwnerChange) before.
func AddUser(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address string, role auth.Role, actor string, via *string) (auth.User, error) {
	u, err := auth.AddUser(ctx, tx, accountID, address, role, actor)
	if err != nil {
		return auth.User{}, err
	}
	details := map[string]any{"address": u.Address, "role": u.Role}
	data := map[string]any{"address": u.Address, "role": u.Role, "added_by": actor}
	if via != nil {
		details["via"], data["via"] = *via, *via
	}
	now := time.Now()
	if err := audit.Append(ctx, tx, audit.Entry{
		AccountID: accountID,
		At:        now,
		Actor:     audit.Actor(actor),
		Action:    audit.ActionUserAdded,
		Target:    string(audit.UserActor(u.Address)),
		Details:   details,
	}); err != nil {
		return auth.User{}, err
	}
	if _, err := webhook.Emit(ctx, tx, accountID, now, webhook.KindUserAdded, data); err != nil {
		return auth.User{}, err
	}
	return u, nil
}

// RemoveUser removes a user in tx as actor, revoking the keys that
// descend from them, and audits it: user.removed listing the revoked
// keys, and one key.revoked per key (so each key's history shows it).
// via, when set, is added to the details (the command line's name). It
// returns the revoked keys. The API and `api users remove` share it.
func RemoveUser(ctx context.Context, tx bun.Tx, accountID uuid.UUID, address, actor string, via *string) ([]auth.APIKey, error) {
	u, revoked, err := auth.RemoveUser(ctx, tx, accountID, address)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ids := make([]string, len(revoked))
	for i, k := range revoked {
		ids[i] = auth.KeyActorID(k.ID)
		details := map[string]any{"key_id": ids[i], "prefix": k.Prefix, "reason": "its creator " + auth.UserActorID(u.Address) + " was removed"}
		if via != nil {
			details["via"] = *via
		}
		if err := audit.Append(ctx, tx, audit.Entry{
			AccountID: accountID,
			At:        now,
			Actor:     audit.Actor(actor),
			Action:    audit.ActionKeyRevoked,
			Target:    "key:" + ids[i],
			Details:   details,
		}); err != nil {
			return nil, err
		}
	}
	// Their approves on pending approvals (and their keys') no longer
	// count.
	who := auth.UserActorID(u.Address)
	withdrawn, err := approval.WithdrawPerson(ctx, tx, accountID, who)
	if err != nil {
		return nil, err
	}
	// Nor do the exports they asked for or approved, not sealed yet.
	voided, err := wallet.VoidExportsOf(ctx, tx, accountID, who, who+", who asked for or approved it, was removed")
	if err != nil {
		return nil, err
	}
	details := map[string]any{"address": u.Address, "role": u.Role, "revoked_keys": ids, "approvals_withdrawn": withdrawn, "exports_voided": voided}
	if via != nil {
		details["via"] = *via
	}
	return revoked, audit.Append(ctx, tx, audit.Entry{
		AccountID: accountID,
		At:        now,
		Actor:     audit.Actor(actor),
		Action:    audit.ActionUserRemoved,
		Target:    string(audit.UserActor(u.Address)),
		Details:   details,
	})
}

// userErr maps the users' refusals; nil when err is not one of them.
func userErr(err error) *Error {
	switch {
	case errors.Is(err, auth.ErrUserNotFound):
		return errorf(http.StatusNotFound, "user not found")
	case errors.Is(err, auth.ErrUserExists):
		return errorf(http.StatusConflict, auth.ErrUserExists.Error())
	case errors.Is(err, auth.ErrLastOwner):
		return errorf(http.StatusConflict, auth.ErrLastOwner.Error())
	case errors.Is(err, auth.ErrSlackMemberTaken):
		return errorf(http.StatusConflict, auth.ErrSlackMemberTaken.Error())
	case errors.Is(err, auth.ErrTooManyUsers):
		return errorf(http.StatusConflict, auth.ErrTooManyUsers.Error())
	}
	return nil
}

func equalStr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
