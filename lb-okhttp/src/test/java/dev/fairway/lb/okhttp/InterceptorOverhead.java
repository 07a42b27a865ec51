package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import okhttp3.Interceptor;
import okhttp3.Protocol;
import okhttp3.ResponseBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * A rough measurement, not a test and not a benchmark: the time per sequential GET to one loopback
 * MockWebServer through a plain client and through the same client with the interceptor (one
 * target), in alternating rounds after a warm-up. Run with the test classpath:
 * {@code java -cp ... dev.fairway.lb.okhttp.InterceptorOverhead [callsPerRound] [rounds]}.
 * The benchmarks module measures this properly with JMH.
 */
final class InterceptorOverhead {
  private static final okio.ByteString OK = okio.ByteString.encodeUtf8("ok");

  private InterceptorOverhead() {}

  public static void main(String[] args) throws Exception {
    int perRound = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    try (Backends b = Backends.start(1, i -> request -> Backends.ok("ok"));
        LoadBalancer lb = LoadBalancer.builder("svc").targets(b.targets()).strategy(Strategy.roundRobin()).build()) {
      OkHttpClient plain = b.client(null);
      OkHttpClient balanced = plain.newBuilder()
          .addInterceptor(LoadBalancingInterceptor.builder().service("svc", lb).build())
          .build();
      Request direct = new Request.Builder().url("http://127.0.0.1:" + b.port(0) + "/x").build();
      Request logical = new Request.Builder().url("http://svc/x").build();
      loop(plain, direct, 3_000);
      loop(balanced, logical, 3_000);
      double[] plainUs = new double[rounds];
      double[] balancedUs = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        plainUs[r] = loop(plain, direct, perRound);
        balancedUs[r] = loop(balanced, logical, perRound);
      }
      Arrays.sort(plainUs);
      Arrays.sort(balancedUs);
      double p = plainUs[rounds / 2];
      double l = balancedUs[rounds / 2];
      double withInterceptor = interceptorOnlyNanos(lb, plain, 200_000, 5, true);
      double chainOnly = interceptorOnlyNanos(lb, plain, 200_000, 5, false);
      System.out.printf("canned-response chain: %.0f ns/call with the interceptor, %.0f ns/call without: %.0f ns added%n",
          withInterceptor, chainOnly, withInterceptor - chainOnly);
      System.out.printf("rounds=%d callsPerRound=%d%nplain    median %.1f us/call (min %.1f, max %.1f)%n"
              + "balanced median %.1f us/call (min %.1f, max %.1f)%nadded    %.1f us/call (%.1f%%)%n",
          rounds, perRound, p, plainUs[0], plainUs[rounds - 1], l, balancedUs[0], balancedUs[rounds - 1], l - p, 100 * (l - p) / p);
    }
  }

  /**
   * The interceptor's own cost: {@code intercept} on a chain whose {@code proceed} returns a canned
   * response at once, then the response closed; median of {@code rounds} rounds.
   */
  private static double interceptorOnlyNanos(LoadBalancer lb, OkHttpClient client, int calls, int rounds, boolean intercept)
      throws Exception {
    LoadBalancingInterceptor interceptor = LoadBalancingInterceptor.builder().service("svc", lb).build();
    Request logical = new Request.Builder().url("http://svc/x").build();
    okhttp3.Call call = client.newCall(logical);
    Interceptor.Chain[] self = new Interceptor.Chain[1];
    self[0] = (Interceptor.Chain) Proxy.newProxyInstance(Interceptor.Chain.class.getClassLoader(),
        new Class<?>[] {Interceptor.Chain.class}, (proxy, method, a) -> {
          switch (method.getName()) {
            case "request":
              return logical;
            case "call":
              return call;
            case "connection":
              return null;
            case "getRetryOnConnectionFailure":
              return true;
            case "withRetryOnConnectionFailure":
              return self[0];
            case "proceed":
              return new Response.Builder().request((Request) a[0]).protocol(Protocol.HTTP_1_1).code(200).message("OK")
                  .body(ResponseBody.create(OK, null)).build();
            default:
              throw new UnsupportedOperationException(method.getName());
          }
        });
    double[] perCall = new double[rounds + 1];
    for (int r = 0; r <= rounds; r++) { // round 0 is the warm-up
      long start = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        (intercept ? interceptor.intercept(self[0]) : self[0].proceed(logical)).close();
      }
      perCall[r] = (System.nanoTime() - start) / (double) calls;
    }
    double[] measured = Arrays.copyOfRange(perCall, 1, perCall.length);
    Arrays.sort(measured);
    return measured[rounds / 2];
  }

  private static double loop(OkHttpClient client, Request request, int calls) throws Exception {
    long start = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      try (Response response = client.newCall(request).execute()) {
        response.body().string();
      }
    }
    return (System.nanoTime() - start) / 1e3 / calls;
  }
}
