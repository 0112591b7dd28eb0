"""kafka-specgen: Kafka JSON message specs in, a typed pure-Python codec package out.

The stages run in one direction: ``load`` -> ``schema`` -> ``model`` -> ``render`` ->
``format``; ``cli`` wires them together.
"""
