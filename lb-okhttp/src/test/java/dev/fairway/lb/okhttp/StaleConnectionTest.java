package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.SocketEffect;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, defect 1: a server that closes an idle keep-alive connection (as nginx does after
 * {@code keepalive_timeout}) leaves a dead connection in OkHttp's pool; the next request that reuses
 * it fails before it reached the server, and OkHttp re-sends it on a fresh connection for every
 * method. Through the interceptor a POST must fare exactly as well.
 */
class StaleConnectionTest {
  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");

  /** 200 "ok", then the server closes the connection without saying so (no Connection: close). */
  private static MockResponse okThenCloseQuietly() {
    return new MockResponse.Builder().code(200).body("ok").onResponseEnd(new SocketEffect.CloseSocket()).build();
  }

  @Test
  void postAndPatch_onAStalePooledConnection_succeedLikePlainOkHttp() throws Exception {
    try (Backends b = Backends.start(1, i -> request -> okThenCloseQuietly());
        LoadBalancer lb = LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin()).build()) {
      OkHttpClient plain = b.client(null);
      OkHttpClient balanced = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());

      List<String> plainResults = sendEach(plain, "http://127.0.0.1:" + b.port(0));
      int plainConnects = b.connectStarts(0);
      List<String> balancedResults = sendEach(balanced, "http://orders");

      // Each request after the first reused the connection the server had closed, failed before
      // reaching it, and was re-sent on a new connection: four connections, four requests served.
      assertThat(plainResults).containsExactly("POST ok", "PATCH ok", "POST ok", "PATCH ok");
      assertThat(plainConnects).isEqualTo(4);
      assertThat(balancedResults).containsExactly("POST ok", "PATCH ok", "POST ok", "PATCH ok");
      assertThat(b.connectStarts(0) - plainConnects).isEqualTo(4);
      assertThat(b.requests(0)).isEqualTo(8);
      assertThat(LoadBalancingInterceptorTest.inFlight(lb)).isZero();
    }
  }

  private static List<String> sendEach(OkHttpClient client, String base) {
    List<String> results = new ArrayList<>();
    for (String method : List.of("POST", "PATCH", "POST", "PATCH")) {
      Request request = new Request.Builder().url(base + "/pay").method(method, RequestBody.create("amount=5", TEXT)).build();
      try (Response response = client.newCall(request).execute()) {
        results.add(method + " " + response.body().string());
      } catch (IOException e) {
        results.add(method + " " + e);
      }
    }
    return results;
  }
}
