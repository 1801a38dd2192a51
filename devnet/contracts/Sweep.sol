// SPDX-License-Identifier: MIT
//
// The sweeper's own contracts (package payouts, sweeping without gas top-ups).
// The devnet deploys both at start; on another chain an operator deploys them.
//
//   - SweepBatch submits many deposit addresses' token pulls in one transaction,
//     paid by the sweeper's hot wallet: EIP-3009 transferWithAuthorization
//     signatures, EIP-2612 permits followed by transferFrom, or calls into
//     deposit accounts delegated to SweepDelegate (EIP-7702). Every pull pays
//     `collector` (the hot wallet), fixed at deployment: whoever submits a batch,
//     including someone who copied its signatures from the mempool, can only move
//     the deposits' tokens to the collector. A pull that fails does not revert
//     the batch: it is skipped and reported (PullFailed), the others go through,
//     and the sweeper reconciles each pull from the token's own logs.
//   - SweepDelegate is the code a deposit account delegates to with EIP-7702, so
//     tokens with neither EIP-3009 nor EIP-2612 (USDT) can be pulled without gas
//     at the deposit address too. Its one function sends a token to the same
//     fixed collector, so anyone may call it. It keeps no storage (an account's
//     storage outlives its delegation) and accepts ether like any account.
//
// Regenerate the committed artifacts with ./compile.sh after editing this file.
pragma solidity 0.8.37;

// The token functions the sweep contracts call (EIP-3009, EIP-2612, ERC-20). transfer and
// transferFrom are called by encoding only: USDT-like tokens return nothing.
interface ISweepToken {
    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external;
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

contract SweepBatch {
    // The hot wallet every pull pays.
    address public immutable collector;

    // One EIP-3009 authorization: from signed TransferWithAuthorization(from, collector,
    // value, 0, validBefore, nonce).
    struct Authorization {
        address from;
        uint256 value;
        uint256 validBefore;
        bytes32 nonce;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    // One EIP-2612 permit: owner signed Permit(owner, this contract, value, its nonce,
    // deadline).
    struct Permit {
        address owner;
        uint256 value;
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    // index is the pull's position in the batch; reason the call's revert data.
    event PullFailed(uint256 indexed index, address indexed from, bytes reason);

    constructor(address collector_) {
        require(collector_ != address(0), "SweepBatch: zero collector");
        collector = collector_;
    }

    // transferWithAuthorizations submits EIP-3009 authorizations of one token; it returns how
    // many went through.
    function transferWithAuthorizations(address token, Authorization[] calldata items) external returns (uint256 done) {
        for (uint256 i = 0; i < items.length; i++) {
            Authorization calldata a = items[i];
            (bool ok, bytes memory reason) = token.call(
                abi.encodeCall(ISweepToken.transferWithAuthorization, (a.from, collector, a.value, 0, a.validBefore, a.nonce, a.v, a.r, a.s))
            );
            if (ok) {
                done++;
            } else {
                emit PullFailed(i, a.from, reason);
            }
        }
    }

    // permitsAndPulls submits EIP-2612 permits of one token, each followed by the pull it
    // allows. A permit someone else submitted first fails here but left the allowance, so the
    // pull is tried whatever the permit's outcome; only the pull decides.
    function permitsAndPulls(address token, Permit[] calldata items) external returns (uint256 done) {
        for (uint256 i = 0; i < items.length; i++) {
            Permit calldata p = items[i];
            (bool ok, bytes memory reason) = token.call(
                abi.encodeCall(ISweepToken.permit, (p.owner, address(this), p.value, p.deadline, p.v, p.r, p.s))
            );
            bytes memory ret;
            (ok, ret) = token.call(abi.encodeCall(ISweepToken.transferFrom, (p.owner, collector, p.value)));
            if (ok && (ret.length == 0 || abi.decode(ret, (bool)))) {
                done++;
            } else {
                emit PullFailed(i, p.owner, ret.length > 0 ? ret : reason);
            }
        }
    }

    // sweepDelegated calls SweepDelegate.sweep(token, values[i]) on each deposit account
    // (delegated to SweepDelegate by an EIP-7702 authorization, in this transaction or before).
    function sweepDelegated(address token, address[] calldata deposits, uint256[] calldata values) external returns (uint256 done) {
        require(deposits.length == values.length, "SweepBatch: length mismatch");
        for (uint256 i = 0; i < deposits.length; i++) {
            // A call to an account without code (its delegation missing) would "succeed" doing
            // nothing: report it instead.
            if (deposits[i].code.length == 0) {
                emit PullFailed(i, deposits[i], "SweepBatch: not delegated");
                continue;
            }
            (bool ok, bytes memory reason) = deposits[i].call(abi.encodeCall(SweepDelegate.sweep, (token, values[i])));
            if (ok) {
                done++;
            } else {
                emit PullFailed(i, deposits[i], reason);
            }
        }
    }
}

contract SweepDelegate {
    // The hot wallet every sweep pays (the SweepBatch's collector).
    address public immutable collector;

    constructor(address collector_) {
        require(collector_ != address(0), "SweepDelegate: zero collector");
        collector = collector_;
    }

    // sweep sends value of token from this account (the delegating deposit address) to the
    // collector. Tokens that return nothing (USDT) count as success unless they revert.
    function sweep(address token, uint256 value) external {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(ISweepToken.transfer, (collector, value)));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "SweepDelegate: transfer failed");
    }

    // A delegated deposit address still receives ether payments.
    receive() external payable {}
}
