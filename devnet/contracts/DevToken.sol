// SPDX-License-Identifier: MIT
//
// ERC-20 test tokens for the paymentsd devnet (package devnet). They are not
// meant for any real chain: there is no owner, no pausing and no further minting.
//
// Two contracts share one implementation:
//   - DevToken follows the ERC-20 standard: transfer, transferFrom and approve
//     return bool. The devnet deploys it as "USDC". Like Circle's USDC (FiatToken
//     v2) it also takes signatures instead of its holders' gas: EIP-3009
//     (transferWithAuthorization, receiveWithAuthorization, cancelAuthorization,
//     authorizationState) and EIP-2612 (permit, nonces, DOMAIN_SEPARATOR), under
//     the EIP-712 domain {name, version "2", chainId, verifyingContract}, so the
//     gateway's gasless payments and top-up-free sweeps are tested against the
//     same messages, storage writes and gas as the real token.
//   - DevTokenNoReturn copies Tether's (USDT's) well-known quirks so payout code
//     can be tested against them: transfer, transferFrom and approve return
//     NOTHING (callers must not require return data), and approve reverts when
//     changing a non-zero allowance to another non-zero value (set it to 0 first).
//     Like Ethereum's USDT it implements neither EIP-3009 nor EIP-2612.
//     The devnet deploys it as "USDT".
//
// Both revert (with a reason string) on insufficient balance or allowance rather
// than returning false, as USDC and USDT do.
//
// Regenerate the committed artifacts with ./compile.sh after editing this file.
pragma solidity 0.8.37;

abstract contract DevTokenBase {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    uint256 public totalSupply;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    // Mints amountEach to every holder, emitting a Transfer from the zero address
    // for each, like a standard mint.
    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        for (uint256 i = 0; i < holders.length; i++) {
            require(holders[i] != address(0), "mint to the zero address");
            totalSupply += amountEach;
            balanceOf[holders[i]] += amountEach;
            emit Transfer(address(0), holders[i], amountEach);
        }
    }

    function _transfer(address from, address to, uint256 value) internal {
        require(to != address(0), "transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function _spendAllowance(address owner, address spender, uint256 value) internal {
        uint256 current = allowance[owner][spender];
        if (current != type(uint256).max) {
            require(current >= value, "insufficient allowance");
            unchecked {
                allowance[owner][spender] = current - value;
            }
        }
    }

    function _approve(address owner, address spender, uint256 value) internal {
        require(spender != address(0), "approve to the zero address");
        allowance[owner][spender] = value;
        emit Approval(owner, spender, value);
    }
}

// DevTokenSignatures is what Circle's FiatToken v2 adds to ERC-20 for holders
// without gas: EIP-3009 transfers authorised by a signature (random 32-byte
// nonces, a validity window, the nonce's slot written once and never freed) and
// EIP-2612 permits (sequential nonces). Messages, type hashes, events and checks
// follow FiatToken v2 (EIP-712 domain version "2"), so a signature made for the
// real USDC's domain layout verifies here with this token's name, chain id and
// address. Signatures are (v, r, s) with v in {27, 28} and s in the lower half
// of the curve order (no malleable twins).
abstract contract DevTokenSignatures is DevTokenBase {
    // keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267;
    // keccak256("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8;
    // keccak256("CancelAuthorization(address authorizer,bytes32 nonce)")
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429;
    // keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)")
    bytes32 public constant PERMIT_TYPEHASH =
        0x6e71edae12b1b97f4d1f60370fef10105fa2faae0126114a169c64845d6126c9;
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant DOMAIN_TYPEHASH =
        0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    // Half the secp256k1 order: a larger s is the malleable twin of a valid signature.
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    string public constant version = "2";

    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;
    mapping(address => uint256) public nonces;

    // The separator is computed once: the name never changes. A chain split (another chain id
    // under the same state) computes it afresh, so no signature replays across the split.
    uint256 private immutable _deployChainId;
    bytes32 private immutable _deployDomainSeparator;

    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach)
        DevTokenBase(name_, symbol_, decimals_, holders, amountEach)
    {
        _deployChainId = block.chainid;
        _deployDomainSeparator = _domainSeparator();
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _deployChainId ? _deployDomainSeparator : _domainSeparator();
    }

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    // EIP-3009: anyone may submit from's signed transfer; the signature binds to, value, the
    // window and the nonce.
    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external {
        _useAuthorization(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s);
        _transfer(from, to, value);
    }

    // EIP-3009: like transferWithAuthorization, but only the payee may submit it, so a
    // contract paid this way cannot be front-run out of its own deposit.
    function receiveWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external {
        require(to == msg.sender, "DevToken: caller must be the payee");
        _useAuthorization(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s);
        _transfer(from, to, value);
    }

    // EIP-3009: the authorizer gives up an authorization not yet used.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        require(!_authorizationStates[authorizer][nonce], "DevToken: authorization is used or canceled");
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        require(_recover(structHash, v, r, s) == authorizer, "DevToken: invalid signature");
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    // EIP-2612: owner's signed approval of spender, at owner's next sequential nonce.
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external {
        require(deadline >= block.timestamp, "DevToken: permit is expired");
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, nonces[owner]++, deadline));
        require(_recover(structHash, v, r, s) == owner, "DevToken: invalid signature");
        _approve(owner, spender, value);
    }

    function _useAuthorization(
        bytes32 typeHash, address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) private {
        require(block.timestamp > validAfter, "DevToken: authorization is not yet valid");
        require(block.timestamp < validBefore, "DevToken: authorization is expired");
        require(!_authorizationStates[from][nonce], "DevToken: authorization is used or canceled");
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        require(_recover(structHash, v, r, s) == from, "DevToken: invalid signature");
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
    }

    // _recover is the signer of an EIP-712 message in this token's domain (never the zero
    // address: a failed recovery reverts).
    function _recover(bytes32 structHash, uint8 v, bytes32 r, bytes32 s) private view returns (address) {
        require(uint256(s) <= HALF_ORDER, "DevToken: invalid signature 's' value");
        require(v == 27 || v == 28, "DevToken: invalid signature 'v' value");
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "DevToken: invalid signature");
        return signer;
    }

    function _domainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this)));
    }
}

// DevToken is a standard ERC-20 token (deployed as USDC) with FiatToken v2's
// EIP-3009 and EIP-2612 (DevTokenSignatures).
contract DevToken is DevTokenSignatures {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach)
        DevTokenSignatures(name_, symbol_, decimals_, holders, amountEach)
    {}

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        _spendAllowance(from, msg.sender, value);
        _transfer(from, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    // transferBatch sends to several recipients in one transaction: one Transfer log each, as
    // batch payers and exchanges do. A watcher must count every one of them.
    function transferBatch(address[] calldata to, uint256[] calldata values) external returns (bool) {
        require(to.length == values.length, "DevToken: length mismatch");
        for (uint256 i = 0; i < to.length; i++) {
            _transfer(msg.sender, to[i], values[i]);
        }
        return true;
    }
}

// DevTokenNoReturn behaves like Tether's USDT (deployed as USDT): its transfer,
// transferFrom and approve return nothing.
contract DevTokenNoReturn is DevTokenBase {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach)
        DevTokenBase(name_, symbol_, decimals_, holders, amountEach)
    {}

    function transfer(address to, uint256 value) external {
        _transfer(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        _spendAllowance(from, msg.sender, value);
        _transfer(from, to, value);
    }

    // Like USDT: a non-zero allowance can only be set from zero, to make the
    // approve/transferFrom front-running race explicit.
    function approve(address spender, uint256 value) external {
        require(value == 0 || allowance[msg.sender][spender] == 0, "reset allowance to 0 first");
        _approve(msg.sender, spender, value);
    }
}
