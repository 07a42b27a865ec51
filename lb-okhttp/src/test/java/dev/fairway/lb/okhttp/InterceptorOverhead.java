package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
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
      double[] canned = cannedNanos(lb, plain, 100_000, 5);
      System.out.printf("canned responses (no I/O): plain %.0f ns/call, with the interceptor %.0f ns/call: %.0f ns added%n",
          canned[0], canned[1], canned[1] - canned[0]);
      System.out.printf("rounds=%d callsPerRound=%d%nplain    median %.1f us/call (min %.1f, max %.1f)%n"
              + "balanced median %.1f us/call (min %.1f, max %.1f)%nadded    %.1f us/call (%.1f%%)%n",
          rounds, perRound, p, plainUs[0], plainUs[rounds - 1], l, balancedUs[0], balancedUs[rounds - 1], l - p, 100 * (l - p) / p);
    }
  }

  /**
   * The interceptor's own cost: the same client with and without it, where a later application
   * interceptor answers every call with a canned response (no I/O); median of {@code rounds}.
   */
  private static double[] cannedNanos(LoadBalancer lb, OkHttpClient client, int calls, int rounds) throws Exception {
    Interceptor canned = chain -> new Response.Builder().request(chain.request()).protocol(Protocol.HTTP_1_1)
        .code(200).message("OK").body(ResponseBody.create(OK, null)).build();
    OkHttpClient plain = client.newBuilder().addInterceptor(canned).build();
    OkHttpClient balanced = client.newBuilder()
        .addInterceptor(LoadBalancingInterceptor.builder().service("svc", lb).build())
        .addInterceptor(canned)
        .build();
    Request direct = new Request.Builder().url("http://127.0.0.1:1/x").build();
    Request logical = new Request.Builder().url("http://svc/x").build();
    double[] plainNs = new double[rounds];
    double[] balancedNs = new double[rounds];
    loop(plain, direct, calls);
    loop(balanced, logical, calls);
    for (int r = 0; r < rounds; r++) {
      plainNs[r] = loop(plain, direct, calls) * 1e3;
      balancedNs[r] = loop(balanced, logical, calls) * 1e3;
    }
    Arrays.sort(plainNs);
    Arrays.sort(balancedNs);
    return new double[] {plainNs[rounds / 2], balancedNs[rounds / 2]};
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
