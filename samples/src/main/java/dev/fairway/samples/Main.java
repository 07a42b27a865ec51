package dev.fairway.samples;

import dev.fairway.samples.lab.Lab;
import java.util.Arrays;

/**
 * {@code java -jar fairway-samples.jar lab|subset-lab|quickstart|spring|consul-demo [options]}: the samples' one
 * entry point.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    // The JDK's HTTP server reads this once, when the first server starts: without it every
    // loopback exchange stalls ~40 ms (Nagle meets delayed ACK).
    System.setProperty("sun.net.httpserver.nodelay", "true");
    String command = args.length == 0 ? "" : args[0];
    String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
    switch (command) {
      case "lab":
        Lab.main(rest);
        break;
      case "subset-lab":
        dev.fairway.samples.subset.SubsetLab.main(rest);
        break;
      case "quickstart":
        Quickstart.main(rest);
        break;
      case "spring":
        SpringBootSample.main(rest);
        break;
      case "consul-demo":
        System.exit(ConsulDemo.run(System.getenv("CONSUL_HTTP_ADDR"), System.getenv("CONSUL_HTTP_TOKEN"), System.out));
        break;
      default:
        System.err.println("usage: java -jar fairway-samples.jar lab|subset-lab|quickstart|spring|consul-demo [options]");
        System.err.println("  lab          the scenario lab: every strategy against the limit (lab --help)");
        System.err.println("  subset-lab   deterministic vs random subsetting, C clients x S instances, no sockets (subset-lab --help)");
        System.err.println("  quickstart   three local backends, one client, ten balanced calls");
        System.err.println("  spring       two Spring Boot services: a @LoadBalanced RestClient over three orders instances");
        System.err.println("  consul-demo  targets from a Consul agent ($CONSUL_HTTP_ADDR)");
        System.exit(command.isEmpty() || command.equals("--help") ? 0 : 2);
    }
  }
}
