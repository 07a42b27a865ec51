package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Closer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What each attempt of a classic exchange sends, now that an attempt aims the exchange's own request
 * at its target instead of copying it: the target's {@code Host}, the caller's headers and body once
 * each on every attempt (nothing left over from the attempt before), and a relative redirect
 * resolved against the logical host, so it is balanced anew. Servers are the JDK's {@link
 * HttpServer} on loopback (TCP_NODELAY from the build's {@code sun.net.httpserver.nodelay}), which
 * record what arrived.
 */
@org.junit.jupiter.api.Timeout(30)
class AttemptRequestTest {
  private final Closer closer = new Closer();
  private final Clients clients = closer.add(new Clients());
  private final List<String> arrived = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  /** A server that records each request as "port method path host=... x=[...] ua=n body=..." and answers as {@code answer} says. */
  private int server(Answer answer) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    int[] port = new int[1];
    server.createContext("/", exchange -> {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      arrived.add(port[0] + " " + exchange.getRequestMethod() + " " + exchange.getRequestURI()
          + " host=" + exchange.getRequestHeaders().get("Host")
          + " x=" + exchange.getRequestHeaders().get("X-Test")
          + " ua=" + sizeOf(exchange.getRequestHeaders().get("User-Agent"))
          + " body=" + body);
      answer.answer(exchange, port[0]);
    });
    server.start();
    port[0] = server.getAddress().getPort();
    closer.add(() -> server.stop(0));
    return port[0];
  }

  private static int sizeOf(List<String> values) {
    return values == null ? 0 : values.size();
  }

  interface Answer {
    void answer(HttpExchange exchange, int port) throws IOException;
  }

  private static void send(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private LoadBalancer roundRobin(int... ports) {
    Target[] targets = new Target[ports.length];
    for (int i = 0; i < ports.length; i++) {
      targets[i] = Target.of("127.0.0.1", ports[i]);
    }
    return closer.add(LoadBalancer.builder("orders").targets(targets).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.disabled()).build());
  }

  @Test
  void aRetry_sendsTheTargetsHost_andTheCallersHeadersAndBodyOnce() throws Exception {
    int unavailable = server((exchange, port) -> send(exchange, 503, "busy"));
    int ok = server((exchange, port) -> send(exchange, 200, "ok from " + port));
    LoadBalancer lb = roundRobin(unavailable, ok);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 5_000);

    // Round robin starts anywhere: calls until one went to the unavailable target first (the second call at most).
    for (int call = 0; call < 3 && arrived.stream().noneMatch(r -> r.startsWith(unavailable + " ")); call++) {
      HttpPut put = new HttpPut("http://orders/api/items/7?q=a%20b");
      put.setHeader("X-Test", "kept");
      put.setEntity(new StringEntity("payload", ContentType.TEXT_PLAIN));
      assertThat(Clients.body(client, put)).isEqualTo("ok from " + ok);
    }

    String atUnavailable = unavailable + " PUT /api/items/7?q=a%20b host=[127.0.0.1:" + unavailable + "] x=[kept] ua=1 body=payload";
    String atOk = ok + " PUT /api/items/7?q=a%20b host=[127.0.0.1:" + ok + "] x=[kept] ua=1 body=payload";
    assertThat(arrived).endsWith(atUnavailable, atOk); // the retry: its own Host, the caller's header and body once
    assertThat(arrived).allMatch(r -> r.equals(atOk) || r.equals(atUnavailable));
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void aRelativeRedirect_resolvesAgainstTheLogicalHost_andIsBalancedAnew() throws Exception {
    Answer answer = (exchange, port) -> {
      if (exchange.getRequestURI().getPath().equals("/first")) {
        exchange.getResponseHeaders().set("Location", "/second");
        send(exchange, 302, "");
      } else {
        send(exchange, 200, "second from " + port);
      }
    };
    int a = server(answer);
    int b = server(answer);
    LoadBalancer lb = roundRobin(a, b);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 5_000);

    String first = Clients.body(client, new HttpGet("http://orders/first"));

    // Round robin: the redirect's own pick went to the other target. Resolved against the target
    // that answered 302, it would have gone there directly, unbalanced.
    assertThat(arrived).hasSize(2);
    int firstPort = Integer.parseInt(arrived.get(0).split(" ")[0]);
    int secondPort = firstPort == a ? b : a;
    assertThat(arrived).containsExactly(
        firstPort + " GET /first host=[127.0.0.1:" + firstPort + "] x=null ua=1 body=",
        secondPort + " GET /second host=[127.0.0.1:" + secondPort + "] x=null ua=1 body=");
    assertThat(first).isEqualTo("second from " + secondPort);
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }
}
