-- wrk: GET with the merchant's secret key (the path comes from the command line).
request = function()
  wrk.headers["X-Service-Secret-Key"] = os.getenv("BENCH_KEY")
  return wrk.format("GET", wrk.path)
end
