-- cni-bench: after a wrk run, print its latency distribution as fine-grained
-- percentiles (wrk's Lua API gives percentiles and distinct values, not
-- counts), so the agent can rebuild a mergeable histogram. Microseconds.
done = function(summary, latency, requests)
  io.write("cni-bench-wrk-latency-begin\n")
  io.write(string.format("count %d\n", summary.requests))
  io.write(string.format("min %d\nmax %d\n", latency.min, latency.max))
  for i = 1, 999 do
    local p = i / 10
    io.write(string.format("p %.3f %d\n", p, latency:percentile(p)))
  end
  for i = 1, 99 do
    local p = 99.9 + i / 1000
    io.write(string.format("p %.3f %d\n", p, latency:percentile(p)))
  end
  io.write("cni-bench-wrk-latency-end\n")
end
