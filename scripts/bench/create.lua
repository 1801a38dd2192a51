-- wrk: POST a payment with a unique Idempotency-Key and orderId per request.
-- Each wrk thread gets its own prefix so keys never repeat across threads.
local counter = 0
local prefix = ""

function setup(thread)
  thread:set("tid", tostring(math.random(1, 1e9)))
end

function init(args)
  prefix = "bench-" .. tid .. "-"
end

request = function()
  counter = counter + 1
  local body = '{"amount": ' .. (400 + counter % 5000) .. ', "currency": "USD", "orderId": "' .. prefix .. counter .. '"}'
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["X-Service-Secret-Key"] = os.getenv("BENCH_KEY")
  wrk.headers["Idempotency-Key"] = prefix .. counter
  return wrk.format("POST", "/v1/external/secretkey-auth/payments", nil, body)
end
