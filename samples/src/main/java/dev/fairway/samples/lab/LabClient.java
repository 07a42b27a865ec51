package dev.fairway.samples.lab;

import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * One client of a lab run: what one instance of a calling service holds (its balancer and its HTTP
 * client), seen from the run. The users call through {@link #caller}; the run reads the calls in
 * flight to a backend at a kill, and the retries (and hedges) over the window.
 *
 * <p>Four kinds ({@code --client}): {@link OkHttpLabClient}, an OkHttp client with Fairway's
 * interceptor; {@link JdkLabClient}, the JDK's {@code HttpClient} behind {@code FairwayHttpClient};
 * {@link Hc5LabClient}, a classic Apache HttpClient 5 customized by {@code FairwayHttpClient5}; and
 * {@link SpringLabClient}, a Spring context whose {@code @LoadBalanced RestClient} goes through
 * Spring Cloud LoadBalancer (with its own round robin, or with Fairway through the starter).
 * Implementations are safe for use by all the users' threads at once.
 */
interface LabClient extends AutoCloseable {

  /** What one user's thread calls, once per request; built once per user. */
  Call caller(String user);

  /** Calls in flight now, as this client sees them, to the backend listening on {@code port}. */
  int inFlight(int port);

  /** Retries this client has sent since it was built: attempts after a call's first. */
  long retries();

  /** Hedges this client has sent since it was built (0 for Spring Cloud LoadBalancer, which does not hedge). */
  long hedgesSent();

  /** Closes every thread, connection and balancer the client holds. Never throws. */
  @Override
  void close();

  /** One GET of {@code http://backend/work} with the user's {@code X-User} header. */
  interface Call {
    /** The response as the caller sees it (after retries); an exception where there is none. */
    Reply get() throws IOException;
  }

  /** A response: its status and its {@value Backend#BACKEND_HEADER} header (null if absent). */
  record Reply(int status, String backend) {}

  /** The {@code --client} option. */
  enum Kind {
    /** OkHttp with Fairway's {@code LoadBalancingInterceptor} (the lab's original client). */
    OKHTTP,
    /**
     * A Spring context per client with a {@code @LoadBalanced RestClient} through Spring Cloud
     * LoadBalancer: {@link SpringLabClient#SPRING_STRATEGIES} are Spring Cloud LoadBalancer's own
     * balancers (the starter's client part off), every other name is Fairway's strategy through
     * the starter.
     */
    SPRING,
    /** The JDK's {@code java.net.http.HttpClient} wrapped by Fairway's {@code FairwayHttpClient}. */
    JDK,
    /** A classic Apache HttpClient 5 whose exec chain {@code FairwayHttpClient5} customized. */
    HC5;

    /** The name on the command line and in the CSV. */
    String id() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Kind of(String id) {
      for (Kind k : values()) {
        if (k.id().equals(id.trim())) {
          return k;
        }
      }
      throw new LabOptions.UsageException("--client: \"" + id + "\" (expected: okhttp, jdk, hc5 or spring, or a"
          + " comma-separated list of okhttp, jdk and hc5)");
    }

    /** Strategies that only this kind of client runs. */
    List<String> ownStrategies() {
      return this == SPRING ? SpringLabClient.SPRING_STRATEGIES : List.of();
    }
  }
}
