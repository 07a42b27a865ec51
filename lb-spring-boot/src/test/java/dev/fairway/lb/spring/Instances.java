package dev.fairway.lb.spring;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;

/**
 * Loopback instances of the service "orders" for Boot contexts: MockWebServers (TCP_NODELAY), and
 * ports that refuse connections; {@link #properties} lists them for Spring Cloud's simple discovery.
 */
final class Instances implements AutoCloseable {
  final List<MockWebServer> servers = new ArrayList<>();
  /** Every instance's port, in the order added; ids are "i0", "i1", ... */
  final List<Integer> ports = new ArrayList<>();

  MockWebServer server(Function<RecordedRequest, MockResponse> behaviour) throws IOException {
    MockWebServer server = new MockWebServer();
    server.setServerSocketFactory(NoDelayServerSocketFactory.INSTANCE);
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return behaviour.apply(request);
      }
    });
    server.start(InetAddress.getByName("127.0.0.1"), 0);
    servers.add(server);
    ports.add(server.getPort());
    return server;
  }

  MockWebServer ok(String body) throws IOException {
    return server(request -> new MockResponse.Builder().code(200).body(body).build());
  }

  /** A port nothing listens on: connecting is refused at once. */
  int refusing() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      port = s.getLocalPort();
    }
    ports.add(port);
    return port;
  }

  /** Simple-discovery properties for service {@code service}: instance i has id "i<i>". */
  String[] properties(String service) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < ports.size(); i++) {
      String prefix = "spring.cloud.discovery.client.simple.instances." + service + "[" + i + "].";
      out.add(prefix + "uri=http://127.0.0.1:" + ports.get(i));
      out.add(prefix + "instance-id=i" + i);
    }
    return out.toArray(String[]::new);
  }

  @Override
  public void close() throws IOException {
    for (MockWebServer s : servers) {
      s.close();
    }
  }
}
