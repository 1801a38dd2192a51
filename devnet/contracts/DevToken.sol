// SPDX-License-Identifier: MIT
//
// ERC-20 test tokens for the paymentsd devnet (package devnet). They are not
// meant for any real chain: there is no owner, no pausing and no further minting.
//
// Two contracts share one implementation:
//   - DevToken follows the ERC-20 standard: transfer, transferFrom and approve
//     return bool. The devnet deploys it as "USDC".
//   - DevTokenNoReturn copies Tether's (USDT's) well-known quirks so payout code
//     can be tested against them: transfer, transferFrom and approve return
//     NOTHING (callers must not require return data), and approve reverts when
//     changing a non-zero allowance to another non-zero value (set it to 0 first).
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

// DevToken is a standard ERC-20 token (deployed as USDC).
contract DevToken is DevTokenBase {
    constructor(string memory name_, string memory symbol_, uint8 decimals_, address[] memory holders, uint256 amountEach)
        DevTokenBase(name_, symbol_, decimals_, holders, amountEach)
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
