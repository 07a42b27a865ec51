package dev.fairway.lb.kubernetes;

import org.jspecify.annotations.Nullable;

/**
 * Which of a slice's ports the targets get: by the Service port's name, by number, or, when neither is
 * configured, the one TCP port the slice has. Each slice carries its own ports, so the choice is made per
 * slice. Immutable.
 */
record PortChoice(@Nullable String name, int number) {
  static final PortChoice ONLY = new PortChoice(null, 0);

  static PortChoice named(String name) {
    return new PortChoice(name, 0);
  }

  static PortChoice number(int number) {
    return new PortChoice(null, number);
  }

  /**
   * The port for {@code slice}'s endpoints, or -1 when the slice offers none that fits. Only TCP ports
   * count (HTTP runs on TCP). By name: the entry of that name ({@code ""} for an unnamed Service port)
   * with a port number. By number: an entry with that number, or an entry without one ("all ports"),
   * or a slice without ports (a headless Service without ports). Neither: the slice's only TCP port.
   */
  int resolve(Slice slice) {
    if (name != null) {
      for (Slice.Port p : slice.ports()) {
        if (name.equals(p.name()) && isTcp(p) && p.port() != null) {
          return p.port();
        }
      }
      return -1;
    }
    if (number > 0) {
      if (slice.ports().isEmpty()) {
        return number;
      }
      for (Slice.Port p : slice.ports()) {
        if (isTcp(p) && (p.port() == null || p.port() == number)) {
          return number;
        }
      }
      return -1;
    }
    int found = -1;
    for (Slice.Port p : slice.ports()) {
      if (isTcp(p) && p.port() != null) {
        if (found != -1) {
          return -1; // several: the user must say which
        }
        found = p.port();
      }
    }
    return found;
  }

  private static boolean isTcp(Slice.Port p) {
    return "TCP".equals(p.protocol());
  }

  @Override
  public String toString() {
    return name != null ? "port name \"" + name + "\"" : number > 0 ? "port " + number : "the only TCP port";
  }
}
