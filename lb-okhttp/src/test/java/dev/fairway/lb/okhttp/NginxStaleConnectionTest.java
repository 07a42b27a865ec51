package dev.fairway.lb.okhttp;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.FaultServer;
import dev.fairway.lb.testing.Nginx;
import dev.fairway.lb.testing.PostLoad;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * Issue 12, defect 1, against a real server: nginx closes keep-alive connections idle for 1 s,
 * and plain OkHttp and OkHttp through Fairway POST about once a second each, in the same run, so
 * many POSTs reuse a connection nginx is closing or has closed ({@link PostLoad}). Plain OkHttp
 * re-sends those on a fresh connection; through Fairway not one may fail. The plain client sends to
 * one nginx port, Fairway balances over two others; nginx's access log counts what each port
 * answered on how many connections.
 *
 * <p>Bounded: {@code fairway.nginx.threads} threads per client (default 3) for {@code
 * fairway.nginx.seconds} (default 12). The measurement is {@code -Dfairway.nginx.threads=20
 * -Dfairway.nginx.seconds=60}.
 */
class NginxStaleConnectionTest {
  private static final MediaType JSON = MediaType.get("application/json; charset=utf-8");

  @Test
  void posts_againstNginxClosingIdleConnections_neverFailThroughFairway(TestReporter reporter) throws Exception {
    Nginx.requireInstalled();
    int threads = Integer.getInteger("fairway.nginx.threads", 3);
    int seconds = Integer.getInteger("fairway.nginx.seconds", 12);
    try (Nginx nginx = Nginx.start(3);
        LoadBalancer lb = LoadBalancer.builder("orders")
            .targets(Target.of("127.0.0.1", nginx.ports.get(1)), Target.of("127.0.0.1", nginx.ports.get(2)))
            .build()) {
      OkHttpClient plainClient = client(null);
      OkHttpClient fairwayClient = client(LoadBalancingInterceptor.builder().service("orders", lb).build());
      PostLoad.Client plain = new PostLoad.Client("plain OkHttp", "plain",
          id -> post(plainClient, "http://127.0.0.1:" + nginx.ports.get(0), id));
      PostLoad.Client fairway = new PostLoad.Client("OkHttp + Fairway", "fairway",
          id -> post(fairwayClient, "http://orders", id));

      PostLoad.run(threads, seconds, List.of(plain, fairway));

      int fairwayAnswered = fairway.calls() - fairway.failures().size();
      int plainAnswered = plain.calls() - plain.failures().size();
      eventually("nginx logged every call a client got an answer to",
          () -> served(nginx, 1).requests() + served(nginx, 2).requests() >= fairwayAnswered
              && served(nginx, 0).requests() >= plainAnswered);
      Nginx.Served plainServed = served(nginx, 0);
      Nginx.Served fairwayServed1 = served(nginx, 1);
      Nginx.Served fairwayServed2 = served(nginx, 2);
      String summary = String.format("nginx keepalive_timeout 1s, %d threads per client, %d s, a POST every 0.7-1.5 s"
              + " per thread: %s, nginx answered %d on %d connections; %s, nginx answered %d + %d on %d + %d connections",
          threads, seconds, plain, plainServed.requests(), plainServed.connections(), fairway,
          fairwayServed1.requests(), fairwayServed2.requests(), fairwayServed1.connections(), fairwayServed2.connections());
      reporter.publishEntry("nginx", summary);
      System.out.println(summary);

      assertThat(fairway.calls()).as("calls through Fairway").isGreaterThanOrEqualTo(threads * seconds / 2);
      assertThat(fairwayServed1.connections() + fairwayServed2.connections())
          .as("connections Fairway's client opened: some calls reused one")
          .isLessThan(fairwayServed1.requests() + fairwayServed2.requests());
      assertThat(fairway.failures()).as("failures through Fairway (%s)", summary).isEmpty();
      assertThat(LoadBalancingInterceptorTest.inFlight(lb)).isZero();
    }
  }

  private static OkHttpClient client(LoadBalancingInterceptor interceptor) {
    OkHttpClient.Builder builder = new OkHttpClient.Builder()
        .connectTimeout(2, TimeUnit.SECONDS)
        .readTimeout(5, TimeUnit.SECONDS)
        .callTimeout(10, TimeUnit.SECONDS);
    if (interceptor != null) {
      builder.addInterceptor(interceptor);
    }
    return builder.build();
  }

  private static void post(OkHttpClient client, String base, String callId) throws IOException {
    Request post = new Request.Builder().url(base + "/orders")
        .header(FaultServer.CALL_HEADER, callId)
        .post(RequestBody.create("{\"item\":\"" + callId + "\"}", JSON))
        .build();
    try (Response response = client.newCall(post).execute()) {
      String body = response.body().string();
      if (response.code() != 200 || !body.equals("ok")) {
        throw new IOException("HTTP " + response.code() + " " + body);
      }
    }
  }

  private static Nginx.Served served(Nginx nginx, int index) {
    try {
      return nginx.served(nginx.ports.get(index));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
