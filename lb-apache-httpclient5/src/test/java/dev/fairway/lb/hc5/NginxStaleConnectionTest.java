package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import dev.fairway.lb.testing.Nginx;
import dev.fairway.lb.testing.PostLoad;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * Never worse than the plain client (issue 35, item 3), against a real server: nginx closes
 * keep-alive connections idle for 1 s, and plain HttpClient 5 (classic) and HttpClient 5 through
 * Fairway POST about once a second each, in the same run, so many POSTs reuse a connection nginx is
 * closing or has closed ({@link PostLoad}). The plain client sends to one nginx port, Fairway
 * balances over two others; nginx's access log counts what each port answered on how many
 * connections. Both clients are built alike: a pool of one connection per thread, 2 s to connect,
 * 5 s for a response, HttpClient's defaults otherwise.
 *
 * <p>What "never worse" means here follows from what the plain client does. lb-okhttp's test asks
 * for no failure at all through Fairway, because plain OkHttp re-sends a POST whose pooled connection
 * turns out closed. HttpClient 5 does not: its default retry strategy resends no POST after an I/O
 * error, so a POST sent on a connection nginx closes at that moment fails with a {@link
 * NoHttpResponseException} (or a reset) through the plain client and through Fairway too, which
 * resends no request that may have reached a server unless it is idempotent. Fairway splits the
 * calls over two targets, so its connections sit idle longer than the plain client's; it checks a
 * balanced request's connection idle for 1 s or more before writing on it ({@link
 * IdleConnectionCheck}), which HttpClient's pool does only after 2 s. A POST on a connection nginx
 * closes at the moment it goes out still fails, through either client. So the test asserts
 * that every POST that failed through Fairway failed that way and was never answered by nginx, and
 * that nothing else failed: no status, no timeout, no "no target available", no POST answered twice.
 * The counts of both clients are printed side by side (docs/results/2026-12-07-hc5-nginx-never-worse.md).
 *
 * <p>Bounded: {@code fairway.nginx.threads} threads per client (default 3) for {@code
 * fairway.nginx.seconds} (default 10). The measurement is {@code -Dfairway.nginx.threads=20
 * -Dfairway.nginx.seconds=60}.
 */
class NginxStaleConnectionTest {

  @Test
  void posts_againstNginxClosingIdleConnections_failThroughFairwayOnlyAsThePlainClientDoes(TestReporter reporter)
      throws Exception {
    Nginx.requireInstalled();
    int threads = Integer.getInteger("fairway.nginx.threads", 3);
    int seconds = Integer.getInteger("fairway.nginx.seconds", 10);
    try (Closer closer = new Closer()) {
      Nginx nginx = closer.add(Nginx.start(3));
      LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
          .targets(Target.of("127.0.0.1", nginx.ports.get(1)), Target.of("127.0.0.1", nginx.ports.get(2)))
          .build());
      CloseableHttpClient plainClient = closer.add(builder(threads).build());
      CloseableHttpClient fairwayClient = closer.add(
          FairwayHttpClient5.builder().service("orders", lb).build().customize(builder(threads)).build());
      PostLoad.Client plain = new PostLoad.Client("plain HttpClient 5", "plain",
          id -> post(plainClient, "http://127.0.0.1:" + nginx.ports.get(0), id));
      PostLoad.Client fairway = new PostLoad.Client("HttpClient 5 + Fairway", "fairway",
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
      assertThat(fairwayServed1.repeatedCalls()).as("POSTs nginx got twice through Fairway").isEmpty();
      assertThat(fairwayServed2.repeatedCalls()).as("POSTs nginx got twice through Fairway").isEmpty();
      for (PostLoad.Failure failure : fairway.failures()) {
        assertThat(closedUnderTheClient(failure.error()))
            .as("%s failed as plain HttpClient 5 fails a POST on a connection nginx closed (%s)", failure, summary)
            .isTrue();
        assertThat(fairwayServed1.answered(failure.callId()) || fairwayServed2.answered(failure.callId()))
            .as("%s was answered by nginx (%s)", failure, summary).isFalse();
      }
      assertThat(Clients.inFlight(lb)).isZero();
    }
  }

  /** One connection per thread at most, so no call waits for a lease; 2 s to connect, 5 s for a response. */
  private static HttpClientBuilder builder(int threads) {
    return HttpClients.custom()
        .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
            .setMaxConnPerRoute(threads)
            .setMaxConnTotal(2 * threads)
            .setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.ofSeconds(2))
                .setSocketTimeout(Timeout.ofSeconds(5))
                .build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom()
            .setResponseTimeout(Timeout.ofSeconds(5))
            .setConnectionRequestTimeout(Timeout.ofSeconds(5))
            .build());
  }

  private static void post(CloseableHttpClient client, String base, String callId) throws IOException {
    HttpPost post = new HttpPost(base + "/orders");
    post.setHeader(FaultServer.CALL_HEADER, callId);
    post.setEntity(new StringEntity("{\"item\":\"" + callId + "\"}", ContentType.APPLICATION_JSON));
    client.execute(post, response -> {
      String body = EntityUtils.toString(response.getEntity());
      if (response.getCode() != 200 || !body.equals("ok")) {
        throw new IOException("HTTP " + response.getCode() + " " + body);
      }
      return body;
    });
  }

  /**
   * HttpClient's own failure for a request on a pooled connection the server closed before
   * answering: no response at all ({@link NoHttpResponseException}), or the connection reset or
   * broken under the request. Not a timeout (an {@link InterruptedIOException}) and not Fairway's
   * own "no target" (both are IOExceptions too).
   */
  static boolean closedUnderTheClient(Throwable error) {
    if (error instanceof InterruptedIOException || error instanceof NoTargetAvailableException) {
      return false;
    }
    for (Throwable c = error; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String message = String.valueOf(c.getMessage());
      if (c instanceof NoHttpResponseException || message.contains("Connection reset")
          || message.contains("Broken pipe")) {
        return true;
      }
    }
    return false;
  }

  private static Nginx.Served served(Nginx nginx, int index) {
    try {
      return nginx.served(nginx.ports.get(index));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
